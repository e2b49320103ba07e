/**
 * kubeconfig users with a `tokenFile` (kubernetes.io/docs/reference/config-api/kubeconfig.v1/#AuthInfo):
 * client-go reads the bearer token from that file and reads it again as it changes. client-node 1.4 does
 * neither: it ignores `tokenFile`, and reads its own spelling `token-file` once, when the kubeconfig is
 * loaded. This turns each such user into the form client-node's in-cluster config uses (an auth provider
 * with `config.tokenFile`), which the runtime's ApiClient re-reads like client-go
 * (see lib/runtime/client/client-credentials.ts).
 *
 * Caveat: client-node's `newUsers` (which lib/cli/kubeconfig-loader.ts uses too) still reads a
 * `token-file` while loading, relative to the working directory, and fails the load when that file is
 * missing; an absolute `token-file` works. `tokenFile` has no such issue.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { User } from '@kubernetes/client-node';
import { parseKubeConfigYaml } from './kubeconfig-yaml.js';

interface RawUser {
  readonly name?: unknown;
  readonly user?: { readonly token?: unknown; readonly tokenFile?: unknown; readonly 'token-file'?: unknown; readonly exec?: unknown; readonly 'auth-provider'?: unknown };
}

/** One kubeconfig file and its parsed YAML. */
export interface KubeConfigDocument {
  readonly file: string;
  /** The file's YAML as a value (lib/cli/kubeconfig-yaml.ts). */
  readonly config: unknown;
}

/**
 * Rewrites the `users` (of a client-node `KubeConfig`, or a lib/cli/loaded-kubeconfig.ts one) that
 * `documents` (the kubeconfig files they were loaded from, in merge order) give a `tokenFile` or
 * `token-file` to, so that the token is read from the file at request time. A relative path is relative
 * to the kubeconfig file, as in client-go. The first file that names a user decides (kubectl's merge
 * rule). A user with a `token`, an `exec` plugin or an `auth-provider` is left alone: client-go lets
 * `token` win over `tokenFile`.
 */
export function rewriteTokenFileUsers(kc: { users: User[] }, documents: readonly KubeConfigDocument[]): void {
  const seen = new Set<string>();
  for (const { file, config } of documents) {
    const users = (config as { users?: unknown } | null | undefined)?.users;
    for (const entry of Array.isArray(users) ? (users as RawUser[]) : []) {
      if (typeof entry?.name !== 'string' || seen.has(entry.name)) continue;
      seen.add(entry.name);
      const user = entry.user;
      const tokenFile = user?.tokenFile ?? user?.['token-file'];
      if (typeof tokenFile !== 'string' || tokenFile === '' || user?.token || user?.exec || user?.['auth-provider']) continue;
      const path = isAbsolute(tokenFile) ? tokenFile : join(dirname(file), tokenFile);
      const index = kc.users.findIndex((u) => u.name === entry.name);
      if (index < 0) continue;
      const { token: _readOnce, ...rest } = kc.users[index]!;
      const rewritten: User = { ...rest, authProvider: { name: 'tokenFile', config: { tokenFile: path } } };
      kc.users[index] = rewritten;
    }
  }
}

/**
 * {@link rewriteTokenFileUsers} for `files` read and parsed here.
 * @throws Error naming the file when one of `files` can't be read or parsed.
 */
export function readTokenFilesAtRequestTime(kc: { users: User[] }, files: readonly string[]): void {
  const documents = files.map((file) => {
    try {
      return { file, config: parseKubeConfigYaml(readFileSync(file, 'utf8')) };
    } catch (err) {
      throw new Error(`kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
    }
  });
  rewriteTokenFileUsers(kc, documents);
}
