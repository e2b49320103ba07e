/**
 * The project-level files of a project that `cdk8s-operator init` generates: a CommonJS TypeScript cdk8s
 * app (like `cdk8s init typescript-app`) whose operators live in operators/. Each function returns one
 * file's text. The operator files themselves are in operator-templates.ts, operators/index.ts in
 * operators-index.ts.
 */
import { ALLOW_SCRIPTS, DEV_DEPENDENCIES, RUNTIME_DEPENDENCIES } from './dependency-versions.js';
import type { OperatorNaming } from './api-coordinates.js';

/** Where a project's operators are registered; the module the CLI loads (`dev`, `render`). */
export const OPERATORS_MODULE = 'operators/index.ts';

/**
 * The module the image runs: {@link OPERATORS_MODULE} compiled to CommonJS beside its source by the
 * Dockerfile's esbuild step, so that `run` starts without a TypeScript loader (tsx, its loader thread and
 * esbuild's service cost about 65 MB of RSS at start: `npm run bench:start-memory`).
 */
export const IMAGE_MODULE = 'operators/index.js';

/** What the project-level templates need to know. */
export interface ProjectSettings {
  /** The npm package name, image name and default API group label, e.g. `my-operators`. */
  readonly name: string;
  /** The npm spec of `cdk8s-operator-sdk`, e.g. `^0.1.0` or `file:vendor/cdk8s-operator-sdk-0.1.0.tgz`. */
  readonly sdkVersion: string;
  /**
   * When the SDK comes from a tarball (`--sdk-version file:….tgz`): the tarball to copy into the project
   * (absolute) and its path there (`vendor/<file>`), which package.json names and the Dockerfile copies, so
   * that the image build's `npm ci` finds it. @default undefined: the SDK comes from a registry
   */
  readonly vendoredSdk?: { readonly from: string; readonly path: string };
  /** The operator `init` generates. */
  readonly operator: OperatorNaming;
}

/** The image tag the Deployment defaults to (main.ts reads OPERATOR_IMAGE to override it). */
export function defaultImage(name: string): string {
  return `${name}:0.1.0`;
}

/** `package.json`: private, the SDK (`sdkVersion`) and its peers, devDependencies pinned exactly; scripts synth, test, dev; the reviewed install scripts ({@link ALLOW_SCRIPTS}). */
export function packageJson(project: ProjectSettings): string {
  const manifest = {
    name: project.name,
    version: '0.1.0',
    private: true,
    description: 'Kubernetes operators written as cdk8s constructs with cdk8s-operator-sdk',
    engines: { node: '>=20' },
    scripts: {
      // the versions are pinned above: cdk8s-cli's upgrade check would only add a notice (and a network call)
      synth: 'cdk8s synth --check-upgrade=false',
      test: 'jest',
      dev: `cdk8s-operator dev --once --module ${OPERATORS_MODULE}`,
    },
    dependencies: sorted({ 'cdk8s-operator-sdk': project.sdkVersion, ...RUNTIME_DEPENDENCIES }),
    devDependencies: sorted({ ...DEV_DEPENDENCIES }),
    allowScripts: { ...ALLOW_SCRIPTS },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** `tsconfig.json`: strict TypeScript compiled as CommonJS, with the node and jest types. */
export function tsconfigJson(): string {
  const config = {
    compilerOptions: {
      target: 'ES2022',
      lib: ['es2022'],
      module: 'CommonJS',
      strict: true,
      noImplicitReturns: true,
      noFallthroughCasesInSwitch: true,
      noUnusedLocals: true,
      noUnusedParameters: true,
      esModuleInterop: true,
      resolveJsonModule: true,
      inlineSourceMap: true,
      // the declarations of cdk8s-plus and friends are checked by their authors; this keeps synth fast
      skipLibCheck: true,
      types: ['node', 'jest'],
    },
    include: ['**/*.ts'],
    exclude: ['node_modules', 'dist'],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * `cdk8s.yaml`: `npm run synth` (`cdk8s synth --check-upgrade=false`) runs main.ts with ts-node and writes
 * to dist/. cdk8s-cli reads its upgrade check only from the command line or `CDK8S_CHECK_UPGRADE`, not from
 * cdk8s.yaml, so the script passes the flag: without it, synth offline prints the check's stack trace.
 */
export function cdk8sYaml(): string {
  return `# \`npm run synth\` (cdk8s synth --check-upgrade=false: no upgrade check, quiet offline) runs main.ts
# and writes every operator's install manifests to dist/.
language: typescript
app: npx ts-node main.ts
output: dist
`;
}

/** `main.ts`: the cdk8s app that adds every operator (`OPERATOR_IMAGE` overrides their image) and synthesizes. */
export function mainTs(project: ProjectSettings): string {
  return `/**
 * The cdk8s app: \`npm run synth\` writes one file per operator to dist/, with its
 * CustomResourceDefinition, least-privilege RBAC and the Deployment that runs it.
 *
 * OPERATOR_IMAGE overrides the image those Deployments run (default ${defaultImage(project.name)}),
 * e.g. \`OPERATOR_IMAGE=registry.example.com/${project.name}:1.0.0 npm run synth\`.
 */
import { App } from 'cdk8s';
import { addOperators } from './operators';

const app = new App();
addOperators(app, { image: process.env.OPERATOR_IMAGE || undefined });
app.synth();
`;
}

/** Where {@link integrationTestTs} goes in a project. */
export const INTEGRATION_TEST = 'test/integration.test.ts';

/**
 * `test/integration.test.ts`: every operator of {@link OPERATORS_MODULE} against a real local control
 * plane, through `cdk8s-operator dev --once` in a child process (its own control plane in a temp dir,
 * stopped when it ends): CRDs installed, samples applied, each sample Ready with its children. A child
 * process because the runtime is ESM-only and the project's jest runs CommonJS. The control plane's
 * binaries come from the SDK's cache (downloaded or built on first use; the SDK's
 * docs/concepts/testing.md, "Control-plane binaries").
 */
export function integrationTestTs(): string {
  return `/**
 * Integration test: every operator in ${OPERATORS_MODULE} against a real local control plane (etcd,
 * kube-apiserver, controller manager, scheduler and a kwok fake node), as \`npm run dev\` runs them:
 * the CRDs installed, each operator's samples applied, and each sample reconciled until Ready.
 * The control plane's binaries come from ~/.cache/cdk8s-operator-sdk (downloaded, or built with Go, on
 * first use: minutes); the first run prints their progress.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const cli = join(dirname(require.resolve('cdk8s-operator-sdk/package.json')), 'bin', 'cdk8s-operator.js');

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs \`cdk8s-operator dev --once\` with a control plane of its own in \`dir\`. */
function devOnce(dir: string): Promise<Run> {
  const args = [cli, 'dev', '--once', '--timeout', '300s', '--module', '${OPERATORS_MODULE}', '--dir', dir];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('the operators on a local control plane', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'control-plane-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('GIVEN the samples WHEN the operators reconcile them THEN each becomes Ready with all its children', async () => {
    const run = await devOnce(dir);
    // On failure: dev's stderr, naming each sample not Ready with its Ready condition's reason.
    expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
    // stdout is a table: CR, READY, CHILDREN (ready/total), TIME TO READY; one row per sample.
    const rows = run.stdout.trim().split('\\n').slice(1).map((line) => line.split(/\\s{2,}/));
    expect(rows.length).toBeGreaterThan(0);
    for (const [cr, ready, children] of rows) {
      const [readyChildren, total] = children.split('/');
      expect({ cr, ready, children: readyChildren }).toEqual({ cr, ready: 'True', children: total });
    }
  }, 10 * 60_000);
});
`;
}

/** `jest.config.js`: ts-jest on the `.test.ts` files under test/, as CommonJS. */
export function jestConfigJs(): string {
  return `// Jest runs the TypeScript tests in test/ with ts-jest, as CommonJS like the rest of the project.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\\\.ts$': 'ts-jest' },
};
`;
}

/** `.gitignore`: node_modules, dist, coverage, build info. */
export function gitignore(): string {
  return `node_modules/
dist/
coverage/
*.tsbuildinfo
`;
}

/** `.dockerignore`: what the image build context leaves out (node_modules, dist, tests, .git, tarballs). */
export function dockerignore(): string {
  return `node_modules
dist
test
coverage
.git
*.tgz
`;
}

/** `Dockerfile`: the operator image (production node_modules, operators/ compiled to JavaScript by esbuild at build time, uid 65532). */
export function dockerfile(project: ProjectSettings): string {
  return `# The operator image: this project's operators/ and its production node_modules (the SDK included).
# It has no ENTRYPOINT of its own: the Deployment that \`npm run synth\` writes runs, in /app,
#
#   node node_modules/cdk8s-operator-sdk/bin/cdk8s-operator.js run --module ${IMAGE_MODULE} --operators <name> ...
#
# operators/**/*.ts are compiled to CommonJS beside their sources at build time (esbuild, an SDK
# dependency; no type check: \`npm test\` does that), so the operator starts without a TypeScript loader.
#
#   docker build -t ${defaultImage(project.name)} .

# --- dependencies: production only, from the lockfile --------------------------------------------------
FROM node:26-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
${project.vendoredSdk ? `# The SDK's tarball, which package.json installs from.
COPY vendor ./vendor
` : ''}# --ignore-scripts: nothing the operator needs has an install step (esbuild's only verifies its binary).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# --- runtime --------------------------------------------------------------------------------------------
FROM node:26-alpine
ENV NODE_ENV=production
# V8's young generation in 2 MB semi-spaces instead of up to 16 MB: on Node 20, about 15 MB less RSS at
# start and 25-45 MB less at peak converging 1000 CRs, for about 10 % more CPU; on Node 26 about 4 MB less
# once the operators are loaded (docs/reference/benchmark.md, "Memory at start").
ENV NODE_OPTIONS=--max-semi-space-size=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY operators ./operators
# operators/**/*.ts -> operators/**/*.js (sample.yaml and other files stay beside them, for __dirname).
RUN node_modules/.bin/esbuild 'operators/**/*.ts' --outdir=operators --outbase=operators --format=cjs --platform=node --target=node26 --log-level=warning
# A numeric uid, so the pod's runAsNonRoot check passes. The files above stay root-owned and read-only.
USER 65532:65532
# secure metrics (8443, HTTPS; 8080 with --metrics-secure=false), health probes /healthz and /readyz (8081)
EXPOSE 8443 8081
`;
}

/** `README.md`: the project's layout and how to test, synthesize, run locally, deploy and add an operator. */
export function readme(project: ProjectSettings): string {
  const op = project.operator;
  return `# ${project.name}

Kubernetes operators written as [cdk8s](https://cdk8s.io) constructs with cdk8s-operator-sdk.

| path | what |
|---|---|
| \`operators/${op.kebab}/index.ts\` | the ${op.kind} operator: its spec (a zod schema) and \`render\`, which turns one ${op.kind} into its children |
| \`operators/${op.kebab}/sample.yaml\` | a sample ${op.kind}: the operator's example, rendered by the tests and applied by \`npm run dev\` |
| \`operators/index.ts\` | \`addOperators(scope)\`: every operator of the project, for synth, the CLI and the image |
| \`test/${op.kebab}.test.ts\` | snapshot test of the sample's render, and a validation test |
| \`${INTEGRATION_TEST}\` | integration test: every operator on a local control plane, each sample Ready |
| \`main.ts\`, \`cdk8s.yaml\` | the cdk8s app that \`npm run synth\` runs |
| \`Dockerfile\` | the operator image |

## Test

\`\`\`sh
npm test                  # jest: the snapshot tests (offline), then the integration test on a local control plane
npx jest -u               # after an intended change to render: update the snapshots, then review the diff
npx cdk8s-operator render --module ${OPERATORS_MODULE} -f operators/${op.kebab}/sample.yaml   # print the children
\`\`\`

The first \`npm test\` writes the snapshots; commit them. (With \`CI=true\`, jest refuses to write new ones.)
\`${INTEGRATION_TEST}\` runs \`cdk8s-operator dev --once\` (below) with a control plane of its own and
passes when every operator's samples are Ready with all their children; the first run gets the
control-plane binaries (minutes, see "Run it locally").

## Synthesize

\`\`\`sh
npm run synth             # dist/${op.operatorName}.k8s.yaml: Namespace, CRD, RBAC, the operator's Deployment
\`\`\`

The Deployment runs the image \`${defaultImage(project.name)}\`; set \`OPERATOR_IMAGE\` to use another one.

## Run it locally

\`\`\`sh
npm run dev               # cdk8s-operator dev --once --module ${OPERATORS_MODULE}
\`\`\`

starts a local control plane (etcd, kube-apiserver, controller manager, scheduler and kwok fake nodes;
no Docker, no cluster), installs the CRDs, runs the operators in-process, applies every sample and exits 0
once they are all Ready. The first run gets the control-plane binaries into \`~/.cache/cdk8s-operator-sdk\`:
it downloads prebuilt ones (envtest, dl.k8s.io, kwok releases; digests checked) when Go is not installed,
or builds them from Go modules (Go >= 1.26) when it is; \`CDK8S_OPERATOR_SDK_BINARIES=download|build\`
chooses. Or set \`KUBEBUILDER_ASSETS\` to a setup-envtest directory. Leave out \`--once\` to keep it running while you
\`kubectl apply\` your own CRs (\`eval "$(npx cdk8s-operator env up)"\` gives kubectl the same control plane).

## Build the image and deploy

\`\`\`sh
docker build -t registry.example.com/${project.name}:0.1.0 .
docker push registry.example.com/${project.name}:0.1.0
OPERATOR_IMAGE=registry.example.com/${project.name}:0.1.0 npm run synth
kubectl apply -f dist/
kubectl apply -f operators/${op.kebab}/sample.yaml
kubectl wait --for=condition=Ready ${op.kind.toLowerCase()}/${op.sampleName} --timeout=2m
\`\`\`

## Add another operator

\`\`\`sh
npx cdk8s-operator create operator --kind Cache --group ${op.group} --version v1alpha1
\`\`\`

adds \`operators/cache/\` (the operator and a sample), \`test/cache.test.ts\`, and registers the operator in
\`operators/index.ts\` at the \`+cdk8s-operator:scaffold\` markers (keep them).
`;
}

function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
