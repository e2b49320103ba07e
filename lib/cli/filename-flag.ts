/**
 * The `-f, --filename <file>` flag that `render` and `diff` share, as kubectl spells it: repeatable, each
 * value a YAML file of one or more documents, `-` for standard input.
 * @see https://kubernetes.io/docs/reference/kubectl/generated/kubectl_diff/
 */

/** Reads all of standard input as UTF-8 (what `-f -` names). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
