import { execFileSync } from 'node:child_process';
import { sdkTarball } from '../support/sdk-tarball.js';

/** The tarball's file list, without the leading `package/`. */
function tarballFiles(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').map((entry) => entry.replace(/^package\//, ''));
}

/** Every string in a JSON value (the targets of `exports`, `typesVersions` …). */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

describe('the npm package', () => {
  let tarball: string;
  let files: string[];
  beforeAll(async () => {
    tarball = await sdkTarball();
    files = tarballFiles(tarball);
  }, 15 * 60_000);

  test('GIVEN npm pack WHEN listed THEN it holds the compiled entries with their types', () => {
    for (const entry of ['out/cjs/index', 'out/cjs/testing/index', 'out/esm/index', 'out/esm/testing/index', 'out/esm/runtime/index', 'out/esm/testing/control-plane-entry', 'out/esm/cli/main']) {
      expect(files).toContain(`${entry}.js`);
      expect(files).toContain(`${entry}.d.ts`);
    }
    expect(files).toEqual(expect.arrayContaining(['bin/cdk8s-operator.js', 'out/cjs/package.json', 'package.json', 'README.md', 'tools/control-plane/build.sh', 'tools/build-lib.sh', 'tools/olm-validate/build.sh']));
  });

  test('GIVEN npm pack WHEN listed THEN it holds no tests, benchmarks, CI, sources, examples or repo-only files', () => {
    const unwanted = files.filter((file) =>
      /^(test|bench|\.ci|lib|operators|synth|node_modules|dist)\//.test(file)
      || /^(Dockerfile|jest\.config\.js|cdk8s\.yaml|tsconfig.*\.json|package-lock\.json|\.gitignore|\.dockerignore)$/.test(file)
      || (/\.ts$/.test(file) && !/\.d\.ts$/.test(file)));
    expect(unwanted).toEqual([]);
  });

  test('GIVEN the packed package.json WHEN its entry points are read THEN each is compiled output in the tarball: a consumer resolves no TypeScript source (the repository\'s self-reference to lib/ is tsconfig paths, not exports)', () => {
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as Record<string, unknown>;
    const targets = stringsOf([manifest.main, manifest.types, manifest.exports, manifest.typesVersions]).filter((target) => target !== './package.json');
    expect(targets.length).toBeGreaterThan(10);
    expect(targets.filter((target) => !/^\.\/out\/.+\.(js|d\.ts)$/.test(target) || !files.includes(target.slice(2)))).toEqual([]);
  });

  test('GIVEN the CommonJS build WHEN listed THEN only the pure entries are in it (no runtime, CLI or control plane)', () => {
    const cjs = files.filter((file) => file.startsWith('out/cjs/') && file.endsWith('.js'));
    expect(cjs.filter((file) => /\/(runtime|cli)\/|control-plane|package-root/.test(file))).toEqual([]);
  });
});
