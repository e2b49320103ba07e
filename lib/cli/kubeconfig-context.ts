/**
 * `--context NAME` of the commands that talk to a cluster (`run`, `dev`, `diff`): makes a kubeconfig
 * context the current one, or fails naming the contexts there are, as `kubectl --context` does. Works on
 * client-node's `KubeConfig` and on the CLI's own `LoadedKubeConfig`.
 */

/** What {@link useContext} needs of a kubeconfig. */
export interface ContextSelectable {
  getContextObject(name: string): unknown;
  getContexts(): readonly { readonly name: string }[];
  currentContext: string;
}

/**
 * Makes `name` the current context of `kubeConfig` (`--context`).
 * @throws Error `--context NAME: no such context in the kubeconfig; known: a, b` when there is no such context
 */
export function useContext(kubeConfig: ContextSelectable, name: string): void {
  if (!kubeConfig.getContextObject(name)) {
    const known = kubeConfig.getContexts().map((context) => context.name);
    throw new Error(`--context ${name}: no such context in the kubeconfig; known: ${known.join(', ') || 'none'}`);
  }
  kubeConfig.currentContext = name;
}
