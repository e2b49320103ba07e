/**
 * lib/cli/kubeconfig-loader.ts against client-node 1.4's KubeConfig, the way `cdk8s-operator run` used it
 * before (loadFromFile / loadFromDefault / loadFromCluster, then the token file rewrite and the "no
 * current cluster" check): the same generated kubeconfig files and environments, the same current
 * cluster, user, context and lists, or an error for the same inputs (client-node's message, after
 * `kubeconfig FILE: `).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { SERVICE_ACCOUNT_DIR, loadKubeConfig } from '../../lib/cli/kubeconfig-loader.js';
import { readTokenFilesAtRequestTime } from '../../lib/cli/kubeconfig-token-file.js';
import { parseKubeConfigYaml } from '../../lib/cli/kubeconfig-yaml.js';
import type { KubeConfigView } from '../../lib/cli/loaded-kubeconfig.js';
import { ClientCredentials } from '../../lib/runtime/client/client-credentials.js';
import { ManualClock } from '../../lib/runtime/clock.js';

let dir: string;
let runs = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-loader-'));
  await writeFile(join(dir, 'token'), 'file-token\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ENV_KEYS = ['KUBECONFIG', 'HOME', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;

/** Runs `fn` with exactly `env`'s values of ENV_KEYS in process.env (client-node reads process.env). */
function withProcessEnv<T>(env: NodeJS.ProcessEnv, fn: () => T): T {
  const saved = ENV_KEYS.map((k) => [k, process.env[k]] as const);
  for (const k of ENV_KEYS) {
    if (env[k] === undefined) delete process.env[k];
    else process.env[k] = env[k];
  }
  try {
    return fn();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** What `run`'s loadKubeConfig did before the loader, with client-node (prefix: loadFromCluster's). */
function viaClientNode(path: string | undefined, env: NodeJS.ProcessEnv, prefix: string): KubeConfig {
  const kc = new KubeConfig();
  let files: string[] = [];
  withProcessEnv(env, () => {
    if (path) {
      kc.loadFromFile(path);
      files = [path];
    } else if (env.KUBECONFIG) {
      kc.loadFromDefault();
      files = env.KUBECONFIG.split(delimiter).filter((f) => f !== '');
    } else if (env.KUBERNETES_SERVICE_HOST && existsSync(`${prefix}${SERVICE_ACCOUNT_DIR}/token`)) kc.loadFromCluster(prefix);
    else {
      kc.loadFromDefault();
      const home = env.HOME ? join(env.HOME, '.kube', 'config') : undefined;
      if (home && existsSync(home)) files = [home];
    }
  });
  readTokenFilesAtRequestTime(kc, files);
  if (!kc.getCurrentCluster()) throw new Error(`no current cluster in the kubeconfig${path ? ` ${path}` : ''}`);
  return kc;
}

type Outcome = { readonly error: Error } | { readonly kc: KubeConfigView };

function view(kc: KubeConfigView) {
  return {
    cluster: kc.getCurrentCluster(),
    user: kc.getCurrentUser(),
    context: kc.getCurrentContext(),
    contextObject: kc.getContextObject(kc.getCurrentContext()),
    clusters: kc.getClusters(),
    users: kc.getUsers(),
    contexts: kc.getContexts(),
  };
}

/** Loads with both and asserts the same result, or errors for the same input. */
async function expectSame(path: string | undefined, env: NodeJS.ProcessEnv, prefix = ''): Promise<Outcome> {
  let theirs: Outcome;
  try {
    theirs = { kc: viaClientNode(path, env, prefix) };
  } catch (error) {
    theirs = { error: error as Error };
  }
  let ours: Outcome;
  try {
    ours = { kc: await loadKubeConfig(path, env, { serviceAccountPathPrefix: prefix }) };
  } catch (error) {
    ours = { error: error as Error };
  }
  if ('error' in theirs) {
    if (!('error' in ours)) throw new Error(`client-node failed (${theirs.error.message}) and the loader did not`);
    const message = theirs.error.message;
    // (By name: errors of Node's own modules come from another realm than jest's TypeError.)
    if (theirs.error.name === 'TypeError' || theirs.error.name === 'YAMLException') {
      // client-node's own wording is a JavaScript or js-yaml one here; ours names the file or variable.
      expect(ours.error.message).toMatch(/^(kubeconfig .+: |KUBECONFIG=)/);
    } else if (message.startsWith('no current cluster')) {
      expect(ours.error.message).toBe(message);
    } else {
      expect(ours.error.message).toMatch(/^kubeconfig /);
      expect(ours.error.message.slice(-message.length - 2)).toBe(`: ${message}`);
    }
  } else {
    if ('error' in ours) throw new Error(`the loader failed and client-node did not: ${ours.error.message}`);
    expect(view(ours.kc)).toStrictEqual(view(theirs.kc));
  }
  return ours;
}

// Scalars that js-yaml's default schema and the `yaml` package's core schema resolve differently, or that
// kubeconfig fields treat specially; `yaml.stringify` writes them as plain scalars.
const trickyScalar = fc.constantFrom('0b101', '-0x1F', '+0o7', '-.5', '+.5', '1e400', '-0', '2024-01-02', '2024-1-2 1:02:03', '2024-01-02T10:11:12.', 'yes', 'True', 'FALSE', '~', 'null', '1_000', '0o17', '', ' ', '12');
const name = fc.oneof({ weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c') }, { weight: 1, arbitrary: trickyScalar });
const path = fc.constantFrom('ca.crt', 'sub/ca.crt', '../up/ca.crt', './here.pem', '/etc/abs/ca.crt', '0b1', '');
const data = fc.constantFrom('Y2E=', 'LS0tLS1CRUdJTg==', '');

function optionalRecord<T extends Record<string, unknown>>(fields: { [K in keyof T]: fc.Arbitrary<T[K]> }): fc.Arbitrary<Partial<T>> {
  return fc.record(fields, { requiredKeys: [] }) as fc.Arbitrary<Partial<T>>;
}

const clusterEntry = optionalRecord({
  name,
  cluster: fc.oneof(
    { weight: 8, arbitrary: optionalRecord({
      server: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('https://k8s.example:6443', 'https://k8s.example:6443/', 'http://127.0.0.1:8080') }, { weight: 1, arbitrary: trickyScalar }),
      'certificate-authority': path,
      'certificate-authority-data': data,
      'insecure-skip-tls-verify': fc.constantFrom<unknown>(true, false, 'true', 'yes', 1),
      'tls-server-name': name,
      'proxy-url': fc.constantFrom('http://proxy:3128'),
    }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'x') },
  ),
});

const userEntry = optionalRecord({
  name,
  user: fc.oneof(
    { weight: 8, arbitrary: optionalRecord({
      token: fc.oneof(fc.constantFrom('t0k3n'), trickyScalar),
      tokenFile: fc.constantFrom('token', 'missing-token', '/abs/missing', ''),
      // client-node reads `token-file` while loading, relative to the working directory.
      'token-file': fc.constantFrom('TOKEN_ABS', 'relative-missing-token'),
      'client-certificate': path,
      'client-key': path,
      'client-certificate-data': data,
      'client-key-data': data,
      username: name,
      password: fc.oneof(fc.constantFrom('pw'), trickyScalar),
      as: name,
      exec: fc.constantFrom({ apiVersion: 'client.authentication.k8s.io/v1', command: 'true' }),
      'auth-provider': fc.constantFrom({ name: 'oidc', config: { 'id-token': 'x' } }),
    }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'x') },
  ),
});

const contextEntry = optionalRecord({
  name,
  context: fc.oneof(
    { weight: 8, arbitrary: optionalRecord({ cluster: name, user: name, namespace: fc.oneof(fc.constantFrom('ns'), trickyScalar) }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'x') },
  ),
});

const list = <T>(entry: fc.Arbitrary<T>) => fc.oneof({ weight: 8, arbitrary: fc.array(entry, { maxLength: 3 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 'x', [null]) });

const kubeconfig = optionalRecord({
  apiVersion: fc.constant('v1'),
  kind: fc.constant('Config'),
  clusters: list(clusterEntry),
  users: list(userEntry),
  contexts: list(contextEntry),
  'current-context': name,
});

/**
 * A kubeconfig that loads (unless merged with a file that has one of its names): 1 or 2 names, each a
 * cluster, a user and a context of that cluster and user, and maybe the current context.
 */
const validKubeconfig = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), { minLength: 1, maxLength: 2 }).chain((names) =>
  fc.record(
    {
      clusters: fc.tuple(...names.map((n) => optionalRecord({ server: fc.constantFrom('https://k8s.example:6443'), 'certificate-authority': path.filter((p) => p !== '0b1'), 'insecure-skip-tls-verify': fc.boolean() }).map((cluster) => ({ name: n, cluster: { server: `https://${n}.example`, ...cluster } })))),
      users: fc.tuple(...names.map((n) => optionalRecord({ token: fc.constantFrom('t'), tokenFile: fc.constantFrom('token'), 'client-certificate': path.filter((p) => p !== '0b1'), 'client-key': path.filter((p) => p !== '0b1') }).map((user) => ({ name: n, user })))),
      contexts: fc.constant(names.map((n) => ({ name: n, context: { cluster: n, user: n } }))),
      'current-context': fc.constantFrom(...names, 'absent'),
    },
    { requiredKeys: ['clusters', 'users', 'contexts'] },
  ),
);

/** A file's text: the config as YAML or JSON, or one of the odd files. */
const fileText = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(validKubeconfig, fc.constantFrom('yaml', 'json')).map(([config, format]) => ({ config, format })) },
  { weight: 6, arbitrary: fc.tuple(kubeconfig, fc.constantFrom('yaml', 'json', 'bom')).map(([config, format]) => ({ config, format })) },
  { weight: 1, arbitrary: fc.constantFrom('', '# only a comment\n', '- a\n', 'hello\n', 'clusters: [1\n', 'clusters: !foo x\n', 'a: 1\n---\nb: 2\n', 'a: 1\na: 2\n', '---\n').map((raw) => ({ raw })) },
);

function render(text: { config?: unknown; format?: string; raw?: string }, tokenAbs: string): string {
  if (text.raw !== undefined) return text.raw;
  const body = text.format === 'json' ? JSON.stringify(text.config) : stringify(text.config);
  return (text.format === 'bom' ? '\uFEFF' : '') + body.replaceAll('TOKEN_ABS', tokenAbs);
}

/** Writes the files under a fresh directory, each in its own subdirectory (relative paths differ). */
async function writeFiles(texts: { config?: unknown; format?: string; raw?: string }[]): Promise<{ root: string; files: string[] }> {
  const root = join(dir, `run-${++runs}`);
  const files: string[] = [];
  for (const [i, text] of texts.entries()) {
    const sub = join(root, `f${i}`, i % 2 ? 'nested' : '');
    await mkdir(sub, { recursive: true });
    const file = join(sub, 'config');
    await writeFile(file, render(text, join(dir, 'token')));
    files.push(file);
  }
  return { root, files };
}

test('GIVEN plain scalars THEN the loader parses them to the values client-node (js-yaml) gives', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...'0123456789+-._boxeEaAcfinNT:Z '.split(''), '0x', '.inf', '.nan', 'true', 'null', '2024-01-02', 'T10:11:12', '+01:00', '.5'), { minLength: 1, maxLength: 6 }), (parts) => {
      // `current-context` is kept as parsed, so client-node hands back js-yaml's value of the scalar.
      const text = `current-context: ${parts.join('')}`;
      const kc = new KubeConfig();
      try {
        kc.loadFromString(text);
      } catch {
        expect(() => parseKubeConfigYaml(text)).toThrow();
        return;
      }
      expect((parseKubeConfigYaml(text) as Record<string, unknown>)['current-context']).toStrictEqual(kc.getCurrentContext());
    }),
    { numRuns: 3000 },
  );
});

test('GIVEN --kubeconfig THEN the loader gives what client-node loadFromFile gives, or fails alike', async () => {
  await fc.assert(
    fc.asyncProperty(fileText, async (text) => {
      const { files } = await writeFiles([text]);
      await expectSame(files[0], {});
    }),
    { numRuns: 300 },
  );
});

test('GIVEN several KUBECONFIG files THEN the merge is client-node loadFromDefault\'s (current-context of the last, duplicates fail)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(fileText, { minLength: 1, maxLength: 3 }), fc.boolean(), async (texts, emptySegments) => {
      const { files } = await writeFiles(texts);
      const KUBECONFIG = (emptySegments ? ['', ...files, ''] : files).join(delimiter);
      await expectSame(undefined, { KUBECONFIG });
    }),
    { numRuns: 300 },
  );
});

test('GIVEN no flag, no KUBECONFIG, not in a pod THEN $HOME/.kube/config, else http://localhost:8080', async () => {
  // client-node's last resort looks at the real service account mount; this machine must have none.
  expect(existsSync(`${SERVICE_ACCOUNT_DIR}/token`)).toBe(false);
  await fc.assert(
    fc.asyncProperty(fc.option(fileText), fc.constantFrom('home', 'no-home-dir', 'unset'), async (text, home) => {
      const { root } = await writeFiles([]);
      if (text) {
        await mkdir(join(root, '.kube'), { recursive: true });
        await writeFile(join(root, '.kube', 'config'), render(text, join(dir, 'token')));
      }
      const HOME = home === 'home' ? root : home === 'no-home-dir' ? join(root, 'absent') : undefined;
      await expectSame(undefined, { HOME });
    }),
    { numRuns: 150 },
  );
});

test('GIVEN a pod (KUBERNETES_SERVICE_HOST and a token) THEN the in-cluster config is client-node loadFromCluster\'s', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('10.96.0.1', 'fd00::1', '::1', '[fd00::1]', 'kubernetes.default.svc', '2001:db8::8a2e:370:7334'),
      fc.constantFrom(undefined, '443', '80', '8080', '8001', '6443', ''),
      fc.constantFrom(undefined, 'team-a', 'team-a\n', ''),
      async (host, port, namespace) => {
        const { root } = await writeFiles([]);
        const sa = join(root, SERVICE_ACCOUNT_DIR);
        await mkdir(sa, { recursive: true });
        await writeFile(join(sa, 'token'), 'sa-token');
        if (namespace !== undefined) await writeFile(join(sa, 'namespace'), namespace);
        const env = { KUBERNETES_SERVICE_HOST: host, ...(port === undefined ? {} : { KUBERNETES_SERVICE_PORT: port }) };
        await expectSame(undefined, env, root);
      },
    ),
    { numRuns: 100 },
  );
});

test('GIVEN the token mounted but no KUBERNETES_SERVICE_HOST and no home config THEN the in-cluster config as client-node makes it then', async () => {
  const { root } = await writeFiles([]);
  await mkdir(join(root, SERVICE_ACCOUNT_DIR), { recursive: true });
  await writeFile(join(root, SERVICE_ACCOUNT_DIR, 'token'), 'sa-token');
  const ours = await loadKubeConfig(undefined, { HOME: join(root, 'absent') }, { serviceAccountPathPrefix: root });
  const theirs = withProcessEnv({}, () => {
    const kc = new KubeConfig();
    kc.loadFromCluster(root);
    return kc;
  });
  expect(view(ours)).toStrictEqual(view(theirs));
  expect(ours.getCurrentCluster()?.server).toBe('https://undefined:undefined');
});

test('GIVEN bad input THEN the error names the file and the field', async () => {
  const { files } = await writeFiles([
    { raw: 'clusters:\n- name: c\n  cluster: {server: 5}\n' },
    { raw: 'users:\n- name: u\n  user: {client-key: [a]}\n' },
    { raw: '' },
    { raw: 'users:\n- name: u\n  user: {token-file: relative-missing-token}\n' },
    { config: { clusters: [{ name: 'c', cluster: { server: 'https://a' } }] } },
  ]);
  await expect(loadKubeConfig(files[0], {})).rejects.toThrow(`kubeconfig ${files[0]}: clusters[0] ("c"): cluster.server must be a string, not number 5`);
  await expect(loadKubeConfig(files[1], {})).rejects.toThrow(`kubeconfig ${files[1]}: user "u" client-key must be a file path (a string), not a list`);
  await expect(loadKubeConfig(files[2], {})).rejects.toThrow(`kubeconfig ${files[2]}: the file holds no kubeconfig (an empty YAML document)`);
  await expect(loadKubeConfig(files[3], {})).rejects.toThrow(`kubeconfig ${files[3]}: users[0] ("u"): ENOENT: no such file or directory, open 'relative-missing-token'`);
  await expect(loadKubeConfig(undefined, { KUBECONFIG: [files[4], files[4]].join(delimiter) })).rejects.toThrow(`kubeconfig ${files[4]}: Duplicate cluster: c`);
  await expect(loadKubeConfig(undefined, { KUBECONFIG: delimiter })).rejects.toThrow(`KUBECONFIG=${delimiter} names no file`);
  // The runtime's KubeConfigError (step kubeconfig), found by brand like every runtime error.
  await expect(loadKubeConfig(files[2], {})).rejects.toMatchObject({ name: 'KubeConfigError', step: 'kubeconfig', reason: 'InvalidKubeconfig' });
  await expect(loadKubeConfig(undefined, { KUBECONFIG: delimiter })).rejects.toMatchObject({ name: 'KubeConfigError', step: 'kubeconfig', reason: 'NoKubeconfigFile' });
});

test('GIVEN merge keys and anchors THEN they are merged as js-yaml merges them', async () => {
  const { files } = await writeFiles([
    {
      raw: [
        'clusters:',
        '- name: c',
        '  cluster: &base {server: "https://k8s.example", certificate-authority: ca.crt}',
        'users:',
        '- name: u',
        '  user:',
        '    <<: {username: admin}',
        '    password: 0b101',
        'contexts:',
        '- name: x',
        '  context: {cluster: c, user: u, namespace: 2024-01-02}',
        'current-context: x',
      ].join('\n'),
    },
  ]);
  const ours = await expectSame(files[0], {});
  expect('kc' in ours && ours.kc.getCurrentUser()).toMatchObject({ username: 'admin', password: 5 });
});

// Scalars written by hand into the file (yaml.stringify would quote some), in the forms YAML 1.1 and 1.2
// readers resolve differently: booleans, octal and hex, exponents, nulls, timestamps, quoted and tagged.
const scalarForm = fc.constantFrom(
  'yes', 'no', 'on', 'off', 'Yes', 'NO', 'y', 'n', 'true', 'False', 'TRUE', 'tRUE',
  '0o17', '017', '0x1F', '-0x1F', '0b101', '+0o7', '-0', '-00', '12', '1_000', '+12', '09',
  '1e3', '1E3', '1.5e-3', '1e400', '.5', '-.5', '+.5', '1.', '.inf', '-.Inf', '.NaN', '12:30:00',
  '~', 'null', 'Null', 'nULL', '',
  '2024-01-02', '2024-1-2', '2024-01-02T10:11:12Z', '2024-01-02 10:11:12.5 +01:00', '2024-1-2 1:02:03', '2024-01-02T10:11:12.',
  '"yes"', "'017'", '"0o17"', "'2024-01-02'", '"~"', '""', '"\\x41"', '!!str 017', '!!str yes', '!!int 017', '!!float 1', '!!null ~', '!!timestamp 2024-01-02',
);

test('GIVEN scalars of every form in each field, with anchors and merge keys THEN the loader reads them as client-node does', async () => {
  let compared = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(scalarForm, { minLength: 7, maxLength: 7 }), fc.boolean(), fc.boolean(), async (forms, mergeList, currentIsForm) => {
      const [serverName, username, password, token, as, namespace, current] = forms;
      const raw = [
        'clusters:',
        '- name: c',
        `  cluster: {server: https://k8s.example, tls-server-name: ${serverName}, certificate-authority-data: Y2E=}`,
        'users:',
        '- name: base',
        `  user: &user {username: ${username}, password: ${password}}`,
        '- name: u',
        '  user:',
        mergeList ? `    <<: [*user, {as: ${as}}]` : '    <<: *user',
        `    token: ${token}`,
        'contexts:',
        '- name: x',
        `  context: {cluster: c, user: u, namespace: ${namespace}}`,
        `current-context: ${currentIsForm ? current : 'x'}`,
      ].join('\n');
      const { files } = await writeFiles([{ raw }]);
      const loaded = await expectSame(files[0], {});
      let theirs: unknown;
      try {
        const kc = new KubeConfig();
        kc.loadFromString(raw);
        theirs = { user: kc.getUser('u'), namespace: kc.getContextObject('x')?.namespace, current: kc.getCurrentContext() };
        compared++;
      } catch {
        return; // refused for a field's value, not its YAML: expectSame held the loaders to the same error
      }
      const ours = parseKubeConfigYaml(raw) as { users: { user: Record<string, unknown> }[]; 'current-context': unknown };
      expect(ours['current-context']).toStrictEqual((theirs as { current: unknown }).current);
      expect(ours.users[1].user.password).toStrictEqual((theirs as { user: { password?: unknown } }).user.password);
      expect(ours.users[1].user.username).toStrictEqual((theirs as { user: { username?: unknown } }).user.username);
      // client-node maps the other fields (a null token or namespace is left out); our loader maps them alike
      // (when it loads: the current context may name no context, which both refuse, as expectSame checked).
      if ('kc' in loaded) {
        expect(loaded.kc.getUser('u')).toStrictEqual((theirs as { user: unknown }).user);
        expect(loaded.kc.getContextObject('x')?.namespace).toStrictEqual((theirs as { namespace?: unknown }).namespace);
      }
    }),
    { numRuns: 1500 },
  );
  // Most files load in client-node, so the values themselves were compared, not only the outcomes.
  expect(compared).toBeGreaterThan(750);
});

test('GIVEN a user with an exec plugin THEN applyToHTTPSOptions imports client-node and runs the plugin', async () => {
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec' } });
  const { files } = await writeFiles([
    {
      config: {
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
        users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', `process.stdout.write(${JSON.stringify(credential)})`] } } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      },
      format: 'yaml',
    },
  ]);
  const kc = await loadKubeConfig(files[0], {});
  const credentials = new ClientCredentials(kc, { clock: new ManualClock() });
  expect((await credentials.current()).headers.Authorization).toBe('Bearer from-exec');
});
