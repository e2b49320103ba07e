/**
 * The exact versions a generated project pins, so `npm install` in it resolves the same tree today and in
 * CI tomorrow. They are the versions this SDK is built and tested with (its package-lock.json); the SDK
 * itself comes from `--sdk-version`. ts-node is only what `cdk8s.yaml` runs `main.ts` with.
 */

/** What the project runs with, the operator image included: the SDK's peers and the construct library. */
export const RUNTIME_DEPENDENCIES = {
  cdk8s: '2.70.106',
  'cdk8s-plus-28': '2.5.6',
  constructs: '10.8.1',
  zod: '4.6.7',
} as const;

/** What synth and the tests need, left out of the image (`npm ci --omit=dev`). */
export const DEV_DEPENDENCIES = {
  '@types/jest': '30.0.0',
  '@types/node': '20.19.43',
  'cdk8s-cli': '2.207.60',
  jest: '30.5.2',
  'ts-jest': '29.4.15',
  'ts-node': '10.9.2',
  typescript: '5.9.3',
} as const;

/**
 * `allowScripts` of the generated package.json: the install scripts of its dependency tree, reviewed
 * (npm 11.16+ lists unreviewed ones after every install; npm 12 skips them). esbuild's postinstall
 * checks its platform binary (tsx, which loads TypeScript operators, runs on it); @parcel/watcher's
 * (jest's file watcher) would build a native module from source when no prebuilt one fits, and jest
 * works without it. The same list as this repository's own package.json.
 * @see https://docs.npmjs.com/cli/v11/configuring-npm/package-json#allowscripts
 */
export const ALLOW_SCRIPTS = {
  esbuild: true,
  '@parcel/watcher': false,
} as const;
