/**
 * The tested Kubernetes range (docs/reference/kubernetes-versions.md): which minors the local control
 * plane has, how a version names one, that build.sh and the CI wiring agree with it. No binaries built:
 * build.sh refuses an untested minor before it looks for Go.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { controlPlaneBuildScript } from '../../lib/testing/control-plane-binaries.js';
import { defaultKubernetesMinor, goBuildDirName, pinnedVersions, testedKubernetesMinor, testedKubernetesMinors } from '../../lib/testing/control-plane-release.js';
import { commandEnv, runCommand } from '../support/run-command.js';
import { REPO_ROOT } from '../support/sdk-tarball.js';

const goMod = (path: string, module: string): string =>
  new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[./]/g, '\\$&')}\\s+(v\\S+)`, 'm').exec(readFileSync(join(REPO_ROOT, 'tools', 'control-plane', path), 'utf8'))![1]!;

test('GIVEN tools/control-plane WHEN the tested minors are read THEN the newest (kube/go.mod) comes first and the v1.35 modules give the oldest, with the newest kwok', () => {
  expect(testedKubernetesMinors()).toEqual(['1.37', '1.35']);
  expect(defaultKubernetesMinor()).toBe('1.37');
  expect(pinnedVersions()).toEqual({ kubernetes: goMod('kube/go.mod', 'k8s.io/kubernetes'), etcd: goMod('etcd/go.mod', 'go.etcd.io/etcd/server/v3'), kwok: goMod('kwok/go.mod', 'sigs.k8s.io/kwok') });
  expect(pinnedVersions('1.35')).toEqual({ kubernetes: goMod('v1.35/kube/go.mod', 'k8s.io/kubernetes'), etcd: goMod('v1.35/etcd/go.mod', 'go.etcd.io/etcd/server/v3'), kwok: goMod('kwok/go.mod', 'sigs.k8s.io/kwok') });
  expect(pinnedVersions('1.35').kubernetes).toMatch(/^v1\.35\.\d+$/);
  expect(pinnedVersions('1.37')).toEqual(pinnedVersions());
});

test('GIVEN a version WHEN it names a tested minor THEN the minor, else an error naming the tested minors', () => {
  expect(testedKubernetesMinor(undefined)).toBeUndefined();
  expect(['1.35', 'v1.35', pinnedVersions('1.35').kubernetes, pinnedVersions('1.35').kubernetes.slice(1)].map(testedKubernetesMinor)).toEqual(['1.35', '1.35', '1.35', '1.35']);
  expect(() => testedKubernetesMinor('1.30')).toThrow('Kubernetes version "1.30" is not one the local control plane has; the tested minors are 1.37, 1.35');
  expect(() => testedKubernetesMinor('latest')).toThrow('the tested minors are 1.37, 1.35');
  expect(() => testedKubernetesMinor('1.35.999')).toThrow(`Kubernetes version "1.35.999": the local control plane's 1.35 is ${pinnedVersions('1.35').kubernetes}; give the minor (1.35)`);
});

test('GIVEN build.sh WHEN given an untested minor or no value THEN exit 2 naming the tested minors; the bin dir name of a minor is its pinned versions\'', async () => {
  const env = commandEnv({ CDK8S_OPERATOR_SDK_CACHE: '/nonexistent-cache' });
  const untested = await runCommand('bash', [controlPlaneBuildScript(), '--kubernetes-version', '1.30'], { cwd: REPO_ROOT, env, timeoutMs: 60_000 });
  expect(untested).toEqual({ code: 2, stdout: '', stderr: '[control-plane build] no Kubernetes 1.30 here; the tested minors are: 1.37 1.35\n' });
  const empty = await runCommand('bash', [controlPlaneBuildScript(), '--kubernetes-version'], { cwd: REPO_ROOT, env, timeoutMs: 60_000 });
  expect(empty).toMatchObject({ code: 2, stdout: '' });
  expect(empty.stderr).toContain('--kubernetes-version needs a value');
  expect(goBuildDirName(pinnedVersions('1.35'))).toBe(`${pinnedVersions('1.35').kubernetes}-etcd${pinnedVersions('1.35').etcd}-kwok${pinnedVersions('1.35').kwok}`);
});

test('GIVEN package.json and .ci/run WHEN CI runs THEN test:oldest runs existing integration files on the oldest tested minor, after npm test', () => {
  const script = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['test:oldest']!;
  expect(script).toContain(`CDK8S_OPERATOR_TEST_KUBERNETES_VERSION=${testedKubernetesMinors().at(-1)} `);
  const files = script.split(' ').filter((word) => word.startsWith('test/'));
  expect(files.length).toBeGreaterThanOrEqual(5);
  for (const file of files) expect([file, readFileSync(join(REPO_ROOT, file), 'utf8').length > 0]).toEqual([file, true]);
  const ci = readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8').split('\n');
  expect(ci.indexOf('npm run test:oldest')).toBeGreaterThan(ci.indexOf('npm test'));
  expect(ci.indexOf('npm test')).toBeGreaterThan(-1);
});
