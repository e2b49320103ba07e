import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { OPERATOR_UID } from '../../lib/operator/manifests/operator-deployment.js';
import { addOperators } from '../../operators/index.js';
import { dockerfile as initDockerfile } from '../../lib/cli/scaffold/project-templates.js';

// No Docker engine here: these checks tie the Dockerfile to what the synthesized Deployment expects.
const root = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = readFileSync(`${root}/Dockerfile`, 'utf8');
const dockerignore = readFileSync(`${root}/.dockerignore`, 'utf8').split('\n');
const instructions = dockerfile.split('\n').filter((line) => /^[A-Z]+ /.test(line));
/** The Node release the images run (tools/image-node/version): test:image-node and the benches run on it. */
const PINNED_NODE = readFileSync(`${root}/tools/image-node/version`, 'utf8').trim();
const runtimeStage = instructions.slice(instructions.map((l) => l.startsWith('FROM ')).lastIndexOf(true));

describe('Dockerfile', () => {
  test('GIVEN the image WHEN started THEN it runs `node bin/cdk8s-operator.js` as the uid the Deployment expects', () => {
    expect(runtimeStage[0]).toBe(`FROM node:${PINNED_NODE.split('.')[0]}-alpine`);
    expect(runtimeStage).toContain(`USER ${OPERATOR_UID}:${OPERATOR_UID}`);
    expect(runtimeStage).toContain('ENTRYPOINT ["node", "bin/cdk8s-operator.js"]');
  });

  test('GIVEN the dependencies WHEN installed THEN from the lockfile, without dev dependencies but with the examples\' peers', () => {
    expect(instructions).toContain('COPY package.json package-lock.json ./');
    expect(dockerfile).toContain('&& npm ci --omit=dev --ignore-scripts');
    const moved = /for \(const n of \[([^\]]+)\]\)/.exec(dockerfile)![1].split(',').map((name) => name.trim().replace(/'/g, ''));
    const manifest = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { peerDependencies: Record<string, string>; devDependencies: Record<string, string> };
    // every peer the examples import, and their cdk8s-plus, all pinned as devDependencies
    expect(moved.sort()).toEqual([...Object.keys(manifest.peerDependencies), 'cdk8s-plus-28'].sort());
    for (const name of moved) expect(manifest.devDependencies[name]).toMatch(/^\d+\.\d+\.\d+$/);
  });

  test('GIVEN the image WHEN run THEN it holds what the CLI loads: package.json (ESM), bin, lib, operators', () => {
    for (const copy of ['COPY package.json tsconfig.json ./', 'COPY bin ./bin', 'COPY lib ./lib', 'COPY operators ./operators']) {
      expect(runtimeStage).toContain(copy);
    }
    for (const excluded of ['node_modules', '.git', 'dist', 'test']) expect(dockerignore).toContain(excluded);
  });

  test('GIVEN every synthesized example operator Deployment WHEN compared THEN it runs this image: its WORKDIR, its CLI, the module it copies, its uid', () => {
    const workdir = /^WORKDIR (.+)$/.exec(runtimeStage.find((l) => l.startsWith('WORKDIR '))!)![1];
    for (const operator of addOperators(new App())) {
      const deployment = operator.toJson().find((o: { kind: string }) => o.kind === 'Deployment');
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(dockerfile).toContain(`docker build -t ${container.image} .`);
      expect(container.workingDir).toBe(workdir);
      expect(container.command).toEqual(['node', 'bin/cdk8s-operator.js']); // COPY bin ./bin
      expect(container.args.slice(0, 3)).toEqual(['run', '--module', 'operators/index.ts']); // COPY operators ./operators
      expect(pod.securityContext).toMatchObject({ runAsUser: OPERATOR_UID, runAsNonRoot: true });
      expect(pod.volumes).toContainEqual(expect.objectContaining({ name: 'tmp', emptyDir: expect.anything() })); // tsx's cache
    }
  });

  test('GIVEN both images (this one and the one `init` writes) WHEN their Node is read THEN it is the major tools/image-node/version pins, which test:image-node and the benches run on', () => {
    expect(PINNED_NODE).toMatch(/^\d+\.\d+\.\d+$/);
    const major = PINNED_NODE.split('.')[0];
    const written = initDockerfile({ name: 'my-operators', sdkVersion: '^0.1.0', operator: undefined as never });
    for (const text of [dockerfile, written]) {
      const froms = text.split('\n').filter((line) => line.startsWith('FROM '));
      expect(froms.length).toBe(2);
      for (const from of froms) expect(from).toMatch(new RegExp(`^FROM node:${major}-alpine( AS \\w+)?$`));
    }
    // esbuild compiles the user's operators for that Node
    expect(written).toContain(`--target=node${major} `);
  });
});
