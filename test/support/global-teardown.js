export default async function globalTeardown() {
  await globalThis.__controlPlane?.stop();
}
