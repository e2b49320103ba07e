/**
 * Parses a kubeconfig file's text into the value client-node's `KubeConfig` gets from it: client-node 1.4
 * reads kubeconfigs with js-yaml 4's `load` (default schema; `config.js` `loadFromString`), and so do we,
 * with the same js-yaml (a dependency of both; npm installs one copy). The `yaml` package, used elsewhere
 * in this SDK, resolves some plain scalars differently (binary and signed hex integers, `-.5`, timestamps,
 * merge keys), which would change a password, token or name written that way.
 *
 * @throws js-yaml's YAMLException on a syntax error, more than one document, or an unknown tag.
 */
import { load } from 'js-yaml';

/** The kubeconfig file's text as a value (a mapping for a valid kubeconfig; not validated here). */
export function parseKubeConfigYaml(text: string): unknown {
  return load(text);
}
