/**
 * The CLI's one kubeconfig loader (`run`, `diff`, `deploy`, `undeploy`, `dev`, `env`): loads a kubeconfig
 * as client-node 1.4's `KubeConfig` would (test/cli/kubeconfig-loader.test.ts,
 * test/cli/kubeconfig-request-options.test.ts compare the two), without importing
 * client-node's main entry at start (its `dist/config.js` imports the whole generated API: 78 MB and
 * 0.9 s of CPU, half the start-up of `run`).
 *
 * Which kubeconfig, in order (the choice `run` made with client-node's `loadFromFile` / `loadFromDefault` /
 * `loadFromCluster`, whose behaviour, in client-node 1.4.0's `dist/config.js`, this follows):
 *
 * 1. `path` (`--kubeconfig`): that file alone.
 * 2. `KUBECONFIG`: its files (split on `path.delimiter`, empty names dropped); the first is loaded, each
 *    next one merged in: its `current-context`, when set, replaces the one so far (client-node merges with
 *    `preserveContext = false`; kubectl would keep the first), and a cluster, user or context whose name is
 *    already there fails the load (`Duplicate cluster: x`, `Duplicate user: x`, `Duplicate context: x`),
 *    even when both come from the same file, except within the first file.
 * 3. In a pod (`KUBERNETES_SERVICE_HOST` set and the service account token mounted): the in-cluster
 *    config: server `https://HOST:PORT` (`http` for the ports 80, 8080 and 8001; an IPv6 host in
 *    brackets), the mounted `ca.crt`, the token file as an auth provider named `tokenFile`, the namespace
 *    file's content (untrimmed) as the context's namespace.
 * 4. Otherwise `$HOME/.kube/config` (when `HOME` is set and exists); else, when the token is mounted, the
 *    in-cluster config (with whatever `KUBERNETES_SERVICE_HOST`/`PORT` say, even unset); else client-node's
 *    last resort, `http://localhost:8080` with no credentials. On Windows this step is client-node's own
 *    `loadFromDefault()` (its home directory rules and WSL fallback), imported then.
 *
 * Each file: YAML as client-node's js-yaml reads it, with `yaml` (lib/cli/kubeconfig-yaml.ts); entries validated and mapped by
 * client-node's own `newClusters`, `newContexts`, `newUsers` (`dist/config_types.js`, which imports
 * only `node:fs`), so names, defaults and the `token-file` read are client-node's; then relative
 * `certificate-authority`, `client-certificate` and `client-key` paths are made relative to the file's
 * directory (`path.join(dirname(file), p)`, as `makePathsAbsolute`). Last, users with a `tokenFile` are
 * rewritten to read it at request time (lib/cli/kubeconfig-token-file.ts).
 *
 * Errors name the file: `kubeconfig FILE: REASON`, where REASON is client-node's message for the same
 * input (`clusters[0].cluster.server is missing`, `Duplicate user: u`, `ENOENT: …`) or, where client-node
 * would fail with a TypeError (an empty file, an entry that is not a mapping, a path that is not a
 * string), a sentence naming the field. The same inputs fail as with client-node.
 */
import { accessSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { isIPv6 } from 'node:net';
import { newClusters, newContexts, newUsers } from '@kubernetes/client-node/dist/config_types.js';
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { useContext } from './kubeconfig-context.js';
import { type KubeConfigDocument, readTokenFilesAtRequestTime, rewriteTokenFileUsers } from './kubeconfig-token-file.js';
import { parseKubeConfigYaml } from './kubeconfig-yaml.js';
import { KubeConfigError } from '../runtime/client/kube-config-source.js';
import { type KubeConfigParts, type KubeConfigView, LoadedKubeConfig } from './loaded-kubeconfig.js';

/** Where a pod's service account is mounted (client-node's `SERVICEACCOUNT_ROOT`). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Options of {@link loadKubeConfig}, for tests. */
export interface KubeConfigLoaderOptions {
  /**
   * Put in front of the service account paths (`${prefix}/var/run/secrets/…/token`, `ca.crt`,
   * `namespace`), as client-node's `loadFromCluster(pathPrefix)`; for tests. @default '': the real mount
   */
  readonly serviceAccountPathPrefix?: string;
  /** Decides step 4 (see the module doc). @default process.platform: this machine's */
  readonly platform?: NodeJS.Platform;
  /**
   * The context made current (`--context`) before the current cluster is looked for.
   * @default none: the kubeconfig's `current-context`
   * @throws Error `--context NAME: no such context in the kubeconfig; known: …` (lib/cli/kubeconfig-context.ts)
   */
  readonly context?: string;
}

/**
 * Loads the kubeconfig: `path`, else `env.KUBECONFIG`, else in-cluster config when running in a pod,
 * else `~/.kube/config` (see the module doc for each step).
 * @param path a kubeconfig file (`--kubeconfig`), alone; undefined for the other steps
 * @param env read for `KUBECONFIG`, `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT` and `HOME`. @default process.env
 * @throws KubeConfigError (step `kubeconfig`): `InvalidKubeconfig` with `kubeconfig FILE: REASON` when a file
 *   can't be read, parsed or merged; `NoKubeconfigFile` when `KUBECONFIG` names none;
 *   `InClusterConfigUnreadable` naming the service account file; `NoCurrentCluster` with
 *   `no current cluster in the kubeconfig[ PATH]` when the result has no current cluster
 */
export async function loadKubeConfig(path: string | undefined, env: NodeJS.ProcessEnv = process.env, options: KubeConfigLoaderOptions = {}): Promise<KubeConfigView> {
  const prefix = options.serviceAccountPathPrefix ?? '';
  let kc: KubeConfigView;
  if (path) kc = loadFiles([path]);
  else if (env.KUBECONFIG) {
    const files = env.KUBECONFIG.split(delimiter).filter((f) => f !== '');
    if (files.length === 0) throw new KubeConfigError('NoKubeconfigFile', `KUBECONFIG=${env.KUBECONFIG} names no file`);
    kc = loadFiles(files);
  } else if (env.KUBERNETES_SERVICE_HOST && existsSync(`${prefix}${SERVICE_ACCOUNT_DIR}/token`)) kc = inCluster(env, prefix);
  else kc = (options.platform ?? process.platform) === 'win32' ? await clientNodeDefault() : loadDefault(env, prefix);
  if (options.context !== undefined) useContext(kc, options.context);
  if (!kc.getCurrentCluster()) throw new KubeConfigError('NoCurrentCluster', `no current cluster in the kubeconfig${path ? ` ${path}` : ''}`);
  return kc;
}

/** Step 4 off Windows: `$HOME/.kube/config`, else the in-cluster config, else localhost:8080. */
function loadDefault(env: NodeJS.ProcessEnv, prefix: string): LoadedKubeConfig {
  const home = env.HOME && accessible(env.HOME) ? env.HOME : undefined;
  const config = home ? join(home, '.kube', 'config') : undefined;
  if (config && accessible(config)) return loadFiles([config]);
  if (accessible(`${prefix}${SERVICE_ACCOUNT_DIR}/token`)) return inCluster(env, prefix);
  // client-node's loadFromClusterAndUser({ name: 'cluster', server: 'http://localhost:8080' }, { name: 'user' }).
  return new LoadedKubeConfig({
    clusters: [{ name: 'cluster', server: 'http://localhost:8080' } as Cluster],
    users: [{ name: 'user' }],
    contexts: [{ cluster: 'cluster', user: 'user', name: 'loaded-context' }],
    currentContext: 'loaded-context',
  });
}

/** Step 4 on Windows: client-node itself, as `run` did before this loader. */
async function clientNodeDefault(): Promise<KubeConfigView> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const home = join(homedir(), '.kube', 'config');
  readTokenFilesAtRequestTime(kc, existsSync(home) ? [home] : []);
  return kc;
}

/** The first file, with each next one merged in (step 2), then the token file rewrite. */
function loadFiles(files: readonly string[]): LoadedKubeConfig {
  const documents: KubeConfigDocument[] = [];
  let merged: KubeConfigParts | undefined;
  for (const file of files) {
    try {
      const { parts, config } = loadFile(file);
      documents.push({ file, config });
      if (merged) mergeInto(merged, parts);
      else merged = parts;
    } catch (err) {
      throw new KubeConfigError('InvalidKubeconfig', `kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
  const kc = new LoadedKubeConfig(merged!);
  rewriteTokenFileUsers(kc, documents);
  return kc;
}

/** One file, as client-node's `loadFromFile`: read, parse, map the entries, make paths absolute. */
function loadFile(file: string): { parts: KubeConfigParts; config: unknown } {
  const config = parseKubeConfigYaml(readFileSync(file, 'utf8'));
  if (config === null || config === undefined) throw new Error('the file holds no kubeconfig (an empty YAML document)');
  const raw = config as Record<string, unknown>;
  // client-node's order: clusters, contexts, users; a value that is no list gives no entries.
  const clusters = mapEntries('clusters', raw.clusters, newClusters);
  const contexts = mapEntries('contexts', raw.contexts, newContexts);
  const users = mapEntries('users', raw.users, newUsers);
  const dir = dirname(file);
  for (const cluster of clusters) {
    if (cluster.caFile) cluster.caFile = relativeTo(dir, cluster.caFile, `cluster "${cluster.name}" certificate-authority`);
  }
  for (const user of users) {
    if (user.certFile) user.certFile = relativeTo(dir, user.certFile, `user "${user.name}" client-certificate`);
    if (user.keyFile) user.keyFile = relativeTo(dir, user.keyFile, `user "${user.name}" client-key`);
  }
  return { parts: { clusters, users, contexts, currentContext: raw['current-context'] as string }, config };
}

/**
 * client-node's `newClusters` / `newContexts` / `newUsers` on `entries`. Their own errors name the entry
 * (`clusters[1].name is missing`) and pass through; any other failure (a TypeError on an entry that is
 * not a mapping, a `token-file` that can't be read) is told with the index of the failing entry.
 */
function mapEntries<T>(field: 'clusters' | 'contexts' | 'users', entries: unknown, map: (entries: unknown) => T[]): T[] {
  try {
    return map(entries);
  } catch (err) {
    const message = (err as Error).message;
    if (message.startsWith(`${field}[`) || !Array.isArray(entries)) throw err;
    // The entries before the failing one were mapped without error; find it by mapping each alone.
    const index = entries.findIndex((entry) => {
      try {
        map([entry]);
        return false;
      } catch {
        return true;
      }
    });
    const name = (entries[index] as { name?: unknown } | null | undefined)?.name;
    const which = `${field}[${index}]${typeof name === 'string' ? ` (${JSON.stringify(name)})` : ''}`;
    throw new Error(`${which}: ${entryProblem(field, entries[index]) ?? message}`, { cause: err });
  }
}

/** Why client-node fails with a TypeError on this entry, in words; undefined when not one of those. */
function entryProblem(field: string, entry: unknown): string | undefined {
  if (entry === null || entry === undefined) return `not a mapping (${String(entry)})`;
  const server = (entry as { cluster?: { server?: unknown } }).cluster?.server;
  if (field === 'clusters' && typeof server !== 'string') return `cluster.server must be a string, not ${describe(server)}`;
  return undefined;
}

/** A path of the file in `dir` made absolute (client-node's `makeAbsolutePath`); `field` names it in errors. */
function relativeTo(dir: string, path: unknown, field: string): string {
  if (typeof path !== 'string') throw new Error(`${field} must be a file path (a string), not ${describe(path)}`);
  return isAbsolute(path) ? path : join(dir, path);
}

/** Merges `next` into `into` as client-node's `mergeConfig(next, false)` does. */
function mergeInto(into: KubeConfigParts, next: KubeConfigParts): void {
  const merged = into as { -readonly [K in keyof KubeConfigParts]: KubeConfigParts[K] };
  if (next.currentContext) merged.currentContext = next.currentContext;
  addAll(merged.clusters, next.clusters, 'cluster');
  addAll(merged.users, next.users, 'user');
  addAll(merged.contexts, next.contexts, 'context');
}

function addAll<T extends { readonly name: string }>(list: T[], added: readonly T[], what: string): void {
  for (const entry of added) {
    if (list.some((e) => e.name === entry.name)) throw new Error(`Duplicate ${what}: ${entry.name}`);
    list.push(entry);
  }
}

/** The in-cluster config (client-node's `loadFromCluster(prefix)`), from `env`'s service host and port. */
function inCluster(env: NodeJS.ProcessEnv, prefix: string): LoadedKubeConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  const serverHost = host && isIPv6(host) ? `[${host}]` : host;
  const namespaceFile = `${prefix}${SERVICE_ACCOUNT_DIR}/namespace`;
  let namespace: string | undefined;
  if (accessible(namespaceFile)) {
    try {
      namespace = readFileSync(namespaceFile, 'utf8');
    } catch (err) {
      throw new KubeConfigError('InClusterConfigUnreadable', `service account namespace ${namespaceFile}: ${(err as Error).message}`, { cause: err });
    }
  }
  const cluster: Cluster = { name: 'inCluster', caFile: `${prefix}${SERVICE_ACCOUNT_DIR}/ca.crt`, server: `${scheme}://${serverHost}:${port}`, skipTLSVerify: false };
  const user: User = { name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: `${prefix}${SERVICE_ACCOUNT_DIR}/token` } } };
  const context: Context = { cluster: 'inCluster', name: 'inClusterContext', user: 'inClusterUser', namespace };
  return new LoadedKubeConfig({ clusters: [cluster], users: [user], contexts: [context], currentContext: 'inClusterContext' });
}

/** client-node's `fileExists`: `fs.accessSync` succeeds. */
function accessible(path: string): boolean {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a mapping' : `${typeof value} ${JSON.stringify(value)}`;
}
