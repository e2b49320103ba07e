/**
 * The control-plane downloader (lib/testing/control-plane-download.ts) against a local mirror
 * (test/support/release-mirror.ts) serving archives and digests this test makes: a good set lands in
 * the cache as executables; a wrong published digest, a shortened archive and a connection cut mid-file
 * are refused with the URL and the digests named, and leave nothing in the cache.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binariesSource, controlPlaneBuildScript, resolveControlPlaneBinaries } from '../../lib/testing/control-plane-binaries.js';
import { downloadControlPlaneBinaries } from '../../lib/testing/control-plane-download.js';
import { currentPlatform, ENVTEST_INDEX_URL, goBuildDirName, mirroredUrl, pinnedVersions } from '../../lib/testing/control-plane-release.js';
import { freePort } from '../support/free-port.js';
import { startReleaseMirror, type MirrorExecutables, type ReleaseMirror } from '../support/release-mirror.js';

const NAMES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;

/** A shell script printing its name, padded past 1 MiB so the download streams in many chunks. */
function fakeExecutable(name: string): string {
  return `#!/bin/sh\necho ${name}-from-mirror\nexit 0\n${'#'.repeat(1024 * 1024)}\n`;
}

const executables = Object.fromEntries(NAMES.map((name) => [name, { content: fakeExecutable(name) }])) as MirrorExecutables;
const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

let mirror: ReleaseMirror;
let cacheRoot: string;
let lines: string[];

beforeEach(async () => {
  mirror = await startReleaseMirror(executables);
  cacheRoot = mkdtempSync(join(tmpdir(), 'cp-download-cache-'));
  lines = [];
});

afterEach(async () => {
  await mirror.close();
  rmSync(cacheRoot, { recursive: true, force: true });
});

function download(options: { idleTimeoutMs?: number } = {}): Promise<string> {
  return downloadControlPlaneBinaries({ cacheRoot, mirror: mirror.url, log: (line) => lines.push(line), platform: mirror.release.platform, ...options });
}

const artifact = (executable: string) => mirror.release.artifacts.find((candidate) => executable in candidate.executables)!;

/** What `<cache>/bin` holds: nothing at all after a refused download (no final dir, no staging dir). */
const binEntries = (): string[] => (existsSync(join(cacheRoot, 'bin')) ? readdirSync(join(cacheRoot, 'bin')) : []);

describe('downloadControlPlaneBinaries', () => {
  test('GIVEN a mirror with the pinned release WHEN downloaded THEN the five executables land in <cache>/bin/<k8s>-envtest-kwok<kwok>/, mode 0755, and run', async () => {
    const dir = await download();

    const versions = pinnedVersions();
    expect(dir).toBe(join(cacheRoot, 'bin', `${versions.kubernetes}-envtest-kwok${versions.kwok}`));
    for (const name of NAMES) {
      const path = join(dir, name);
      expect(statSync(path).mode & 0o777).toBe(0o755);
      expect(readFileSync(path, 'utf8')).toBe(fakeExecutable(name));
      expect(execFileSync(path, { encoding: 'utf8' })).toBe(`${name}-from-mirror\n`);
    }
    // Only the executables and the provenance record: archives and extraction dirs are gone.
    expect(readdirSync(dir).sort()).toEqual(['download.json', ...NAMES].sort());
    const record = JSON.parse(readFileSync(join(dir, 'download.json'), 'utf8')) as { files: { url: string; algorithm: string; digest: string; statedBy: string }[] };
    const schedulerUrl = mirroredUrl(artifact('kube-scheduler').url, mirror.url);
    expect(record.files).toContainEqual({ file: `kube-scheduler ${versions.kubernetes}`, url: schedulerUrl, algorithm: 'sha256', digest: sha256(fakeExecutable('kube-scheduler')), statedBy: `${schedulerUrl}.sha256` });
    expect(record.files.find((file) => file.url.endsWith('.tar.gz'))).toMatchObject({ algorithm: 'sha512', statedBy: mirroredUrl(ENVTEST_INDEX_URL, mirror.url) });
    expect(binEntries()).toEqual([`${versions.kubernetes}-envtest-kwok${versions.kwok}`]);
  });

  test('GIVEN a download WHEN it runs THEN progress lines give bytes received of the total per file, and the verified digest', async () => {
    await download();

    const size = Buffer.byteLength(fakeExecutable('kube-controller-manager'));
    const label = `kube-controller-manager ${pinnedVersions().kubernetes}`;
    const mine = lines.filter((line) => line.startsWith(`[control-plane download] ${label}:`));
    expect(mine[0]).toContain(`downloading ${mirroredUrl(artifact('kube-controller-manager').url, mirror.url)} (1.0 MiB)`);
    expect(mine.at(-1)).toMatch(new RegExp(`${size}/${size} bytes \\(1\\.0 MiB of 1\\.0 MiB, 100%\\), sha256 verified, in [\\d.]+ s$`));
    expect(lines.at(-1)).toBe(`[control-plane download] control-plane binaries installed in ${join(cacheRoot, 'bin', mirror.release.dirName)}`);
  });

  test('GIVEN the set is in the cache WHEN asked again THEN it is used without a request', async () => {
    const dir = await download();
    const before = mirror.requests.length;

    await expect(download()).resolves.toBe(dir);
    expect(mirror.requests.length).toBe(before);
  });

  test('GIVEN a published sha256 that the file does not have WHEN downloaded THEN it is refused naming the URL, expected and actual, and the cache stays empty', async () => {
    const scheduler = artifact('kube-scheduler');
    const wrong = sha256('not the kube-scheduler');
    mirror.writeFile(`${scheduler.url}.sha256`, `${wrong}\n`);
    const url = mirroredUrl(scheduler.url, mirror.url);

    const error = await download().then(() => undefined, (err: Error) => err);

    expect(error?.message).toBe(
      `kube-scheduler ${pinnedVersions().kubernetes}: sha256 mismatch for ${url} (${Buffer.byteLength(fakeExecutable('kube-scheduler'))} bytes): ` +
        `expected ${wrong} (stated by ${url}.sha256), got ${sha256(fakeExecutable('kube-scheduler'))}. ` +
        'The file is truncated or not the published one; it was deleted and nothing was added to the cache.',
    );
    expect(binEntries()).toEqual([]);
  });

  test('GIVEN a truncated envtest archive (served whole, half its bytes) WHEN downloaded THEN its sha512 from the index refuses it and the cache stays empty', async () => {
    const envtest = artifact('etcd');
    const full = mirror.readFile(envtest.url);
    mirror.writeFile(envtest.url, full.subarray(0, Math.floor(full.length / 2)));

    await expect(download()).rejects.toThrow(
      new RegExp(`^envtest ${pinnedVersions().kubernetes}: sha512 mismatch for ${escape(mirroredUrl(envtest.url, mirror.url))} \\(${Math.floor(full.length / 2)} bytes\\): expected [0-9a-f]{128} \\(stated by ${escape(mirroredUrl(ENVTEST_INDEX_URL, mirror.url))}\\), got [0-9a-f]{128}\\. The file is truncated`),
    );
    expect(binEntries()).toEqual([]);
  });

  test('GIVEN the connection is cut halfway through a file WHEN downloaded THEN it is refused as truncated with bytes got of Content-Length, and the cache stays empty', async () => {
    const kwok = artifact('kwok');
    mirror.cutAfterHalf(kwok.url);
    const size = Buffer.byteLength(fakeExecutable('kwok'));

    await expect(download()).rejects.toThrow(new RegExp(`^kwok ${pinnedVersions().kwok}: download from ${escape(mirroredUrl(kwok.url, mirror.url))} truncated: got \\d+ of ${size} bytes`));
    expect(binEntries()).toEqual([]);
  });

  test('GIVEN a server that goes silent halfway through a file WHEN downloaded THEN it is refused as stalled after the idle timeout, and the cache stays empty', async () => {
    const scheduler = artifact('kube-scheduler');
    mirror.stallAfterHalf(scheduler.url);
    const size = Buffer.byteLength(fakeExecutable('kube-scheduler'));

    // 3 s: long enough that the files before it never pause that long on a busy machine.
    await expect(download({ idleTimeoutMs: 3000 })).rejects.toThrow(
      new RegExp(`^kube-scheduler ${pinnedVersions().kubernetes}: download from ${escape(mirroredUrl(scheduler.url, mirror.url))} stalled: no bytes for 3 s after \\d+ of ${size} bytes$`),
    );
    expect(binEntries()).toEqual([]);
  });

  test('GIVEN a kwok release that states no digest for the asset WHEN downloaded THEN it is refused rather than taken unchecked', async () => {
    const kwok = artifact('kwok');
    if (kwok.digest.kind !== 'github-release-asset') throw new Error('kwok digest source changed; update this test');
    mirror.writeFile(kwok.digest.releaseUrl, JSON.stringify({ assets: [{ name: kwok.digest.assetName }] }));

    await expect(download()).rejects.toThrow(`states no sha256 digest for ${kwok.digest.assetName} (digest: null); refusing to download it unchecked`);
    expect(binEntries()).toEqual([]);
  });

  test('GIVEN an envtest index without the pinned version WHEN downloaded THEN the error names the index and the versions of that minor it has', async () => {
    const k8s = pinnedVersions().kubernetes;
    const minor = k8s.split('.').slice(0, 2).join('.');
    mirror.writeFile(ENVTEST_INDEX_URL, `releases:\n  ${minor}.0:\n    envtest-${minor}.0-linux-amd64.tar.gz:\n      hash: ${'a'.repeat(128)}\n  v1.20.0: {}\n`);

    await expect(download()).rejects.toThrow(`the envtest index ${mirroredUrl(ENVTEST_INDEX_URL, mirror.url)} has no envtest-${k8s}-linux-amd64.tar.gz under releases.${k8s} (its ${minor} releases: ${minor}.0)`);
  });
});

describe('resolveControlPlaneBinaries with CDK8S_OPERATOR_SDK_BINARIES=download', () => {
  test('GIVEN a mirror and an empty cache WHEN resolved THEN every executable comes from the downloaded dir in that cache', async () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, CDK8S_OPERATOR_SDK_CACHE: cacheRoot, CDK8S_OPERATOR_SDK_BINARIES: 'download', CDK8S_OPERATOR_SDK_BINARIES_MIRROR: mirror.url };

    const binaries = await resolveControlPlaneBinaries({ env, log: (line) => lines.push(line) });

    const dir = join(cacheRoot, 'bin', mirror.release.dirName);
    expect(binaries).toEqual({
      etcd: join(dir, 'etcd'),
      kubeApiServer: join(dir, 'kube-apiserver'),
      kubeControllerManager: join(dir, 'kube-controller-manager'),
      kubeScheduler: join(dir, 'kube-scheduler'),
      kwok: join(dir, 'kwok'),
    });
    expect(lines.some((line) => line.startsWith('[control-plane download] '))).toBe(true);
  });
});

describe('resolveControlPlaneBinaries with a downloaded set in the cache', () => {
  /** A PATH with bash, tar and coreutils but no go, and a dir with an executable `go` that is never run. */
  const noGoPath = '/usr/bin:/bin';

  test('GIVEN a complete downloaded set WHEN resolved with CDK8S_OPERATOR_SDK_BINARIES unset and go on PATH THEN the set is used, nothing is built or fetched', async () => {
    const dir = await download();
    const requests = mirror.requests.length;
    const goDir = join(cacheRoot, 'go-bin');
    mkdirSync(goDir);
    writeFileSync(join(goDir, 'go'), '#!/bin/sh\necho "go must not run" >&2\nexit 1\n', { mode: 0o755 });

    const binaries = await resolveControlPlaneBinaries({ env: { PATH: `${goDir}:${noGoPath}`, HOME: cacheRoot, CDK8S_OPERATOR_SDK_CACHE: cacheRoot } });

    expect(binaries.kubeApiServer).toBe(join(dir, 'kube-apiserver'));
    expect(mirror.requests.length).toBe(requests);
  });

  test('GIVEN a complete downloaded set WHEN resolved with CDK8S_OPERATOR_SDK_BINARIES=build THEN build.sh runs instead (here without Go: its error)', async () => {
    await download();

    await expect(
      resolveControlPlaneBinaries({ env: { PATH: noGoPath, HOME: cacheRoot, CDK8S_OPERATOR_SDK_CACHE: cacheRoot, CDK8S_OPERATOR_SDK_BINARIES: 'build' }, log: () => undefined }),
    ).rejects.toThrow(/build\.sh failed \(exit code 1\)[\s\S]*Go is not installed/);
  });
});

describe('resolveControlPlaneBinaries without Go, offline, with the cache filled', () => {
  /** This process's PATH less every dir holding an executable `go`. */
  const pathWithoutGo = (): string =>
    (process.env.PATH ?? '').split(':').filter((dir) => dir && !existsSync(join(dir, 'go'))).join(':');

  test('GIVEN the real binaries built earlier in the cache, no go on PATH and a mirror WHEN resolved THEN they are used and nothing is requested', async () => {
    // The real set (jest's global setup built it); symlinked into this test's cache as build.sh lays it out.
    const real = await resolveControlPlaneBinaries({ log: () => undefined });
    const built = join(cacheRoot, 'bin', goBuildDirName(pinnedVersions()));
    mkdirSync(built, { recursive: true });
    for (const [key, name] of [['etcd', 'etcd'], ['kubeApiServer', 'kube-apiserver'], ['kubeControllerManager', 'kube-controller-manager'], ['kubeScheduler', 'kube-scheduler'], ['kwok', 'kwok']] as const) {
      symlinkSync(real[key], join(built, name));
    }
    const env = { PATH: pathWithoutGo(), HOME: cacheRoot, CDK8S_OPERATOR_SDK_CACHE: cacheRoot, CDK8S_OPERATOR_SDK_BINARIES_MIRROR: mirror.url };
    expect(binariesSource(env)).toBe('download');

    const binaries = await resolveControlPlaneBinaries({ env, log: (line) => lines.push(line) });

    expect(binaries).toEqual({
      etcd: join(built, 'etcd'),
      kubeApiServer: join(built, 'kube-apiserver'),
      kubeControllerManager: join(built, 'kube-controller-manager'),
      kubeScheduler: join(built, 'kube-scheduler'),
      kwok: join(built, 'kwok'),
    });
    expect(execFileSync(binaries.kubeApiServer, ['--version'], { encoding: 'utf8' })).toContain(pinnedVersions().kubernetes);
    expect(mirror.requests).toEqual([]);
    expect(lines).toEqual([]);
  });

  test('GIVEN KUBEBUILDER_ASSETS with etcd and kube-apiserver and a built set holding only the other three WHEN resolved without go THEN both are combined, nothing is requested', async () => {
    const assets = join(cacheRoot, 'assets');
    const built = join(cacheRoot, 'bin', goBuildDirName(pinnedVersions()));
    mkdirSync(assets);
    mkdirSync(built, { recursive: true });
    for (const name of ['etcd', 'kube-apiserver']) writeFileSync(join(assets, name), '#!/bin/sh\n', { mode: 0o755 });
    for (const name of ['kube-controller-manager', 'kube-scheduler', 'kwok']) writeFileSync(join(built, name), '#!/bin/sh\n', { mode: 0o755 });

    const binaries = await resolveControlPlaneBinaries({
      env: { PATH: pathWithoutGo(), HOME: cacheRoot, CDK8S_OPERATOR_SDK_CACHE: cacheRoot, KUBEBUILDER_ASSETS: assets, CDK8S_OPERATOR_SDK_BINARIES_MIRROR: mirror.url },
      log: (line) => lines.push(line),
    });

    expect(binaries).toEqual({
      etcd: join(assets, 'etcd'),
      kubeApiServer: join(assets, 'kube-apiserver'),
      kubeControllerManager: join(built, 'kube-controller-manager'),
      kubeScheduler: join(built, 'kube-scheduler'),
      kwok: join(built, 'kwok'),
    });
    expect(mirror.requests).toEqual([]);
  });

  test('GIVEN an empty cache, no go and a download URL on a closed port WHEN resolved THEN the error names the URL, --bin-dir, KUBEBUILDER_ASSETS and the cache dirs', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/`;
    const env = { PATH: pathWithoutGo(), HOME: cacheRoot, CDK8S_OPERATOR_SDK_CACHE: cacheRoot, CDK8S_OPERATOR_SDK_BINARIES_MIRROR: closed };

    const error = await resolveControlPlaneBinaries({ env, log: () => undefined }).then(() => undefined, (err: Error) => err);

    expect(error?.message).toMatch(new RegExp(`^cannot download the control plane binaries: GET ${escape(closed)}\\S+: fetch failed`));
    expect(error?.message).toContain('`--bin-dir DIR` (env up, dev; `binDir` of startControlPlane)');
    expect(error?.message).toContain('KUBEBUILDER_ASSETS=DIR with etcd and kube-apiserver');
    expect(error?.message).toContain(`put them in the cache, ${join(cacheRoot, 'bin', goBuildDirName(pinnedVersions()))}/ or ${join(cacheRoot, 'bin', mirror.release.dirName)}/`);
    expect(error?.message).toContain(`with Go >= 1.26 \`bash ${controlPlaneBuildScript()}\``); // the installed script's absolute path
    expect(binEntries()).toEqual([]);
  });
});

describe('binariesSource', () => {
  test('GIVEN CDK8S_OPERATOR_SDK_BINARIES WHEN read THEN download and build are taken as said, anything else is an error naming it', () => {
    expect(binariesSource({ CDK8S_OPERATOR_SDK_BINARIES: 'download', PATH: '/usr/local/go/bin' })).toBe('download');
    expect(binariesSource({ CDK8S_OPERATOR_SDK_BINARIES: 'build', PATH: '' })).toBe('build');
    expect(() => binariesSource({ CDK8S_OPERATOR_SDK_BINARIES: 'fetch' })).toThrow('CDK8S_OPERATOR_SDK_BINARIES: expected "download" or "build", got "fetch"');
  });

  test('GIVEN no CDK8S_OPERATOR_SDK_BINARIES WHEN read THEN it builds when an executable go is on PATH, else downloads', () => {
    const withGo = join(cacheRoot, 'go-bin');
    mkdirSync(withGo);
    writeFileSync(join(withGo, 'go'), '#!/bin/sh\n', { mode: 0o755 });
    const withoutGo = join(cacheRoot, 'empty-bin');
    mkdirSync(withoutGo);

    expect(binariesSource({ PATH: `${withoutGo}:${withGo}` })).toBe('build');
    expect(binariesSource({ PATH: withoutGo })).toBe('download');
  });
});

describe('currentPlatform', () => {
  test('GIVEN a platform WHEN mapped THEN Node names become Go names, and one without prebuilt binaries says to build with Go', () => {
    expect(currentPlatform('linux', 'x64')).toEqual({ os: 'linux', arch: 'amd64' });
    expect(currentPlatform('darwin', 'arm64')).toEqual({ os: 'darwin', arch: 'arm64' });
    expect(() => currentPlatform('win32', 'x64')).toThrow('no prebuilt control-plane binaries for win32/x64 (only linux and darwin on x64 or arm64); build them with Go: bash tools/control-plane/build.sh');
  });
});

describe('mirroredUrl', () => {
  test('GIVEN a mirror base WHEN a publisher URL is mirrored THEN it is <mirror>/<host>/<path>; a base that is not http(s) is refused', () => {
    expect(mirroredUrl('https://dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-scheduler.sha256', 'http://127.0.0.1:8080/mirror/')).toBe(
      'http://127.0.0.1:8080/mirror/dl.k8s.io/release/v1.35.4/bin/linux/amd64/kube-scheduler.sha256',
    );
    expect(mirroredUrl('https://dl.k8s.io/x', undefined)).toBe('https://dl.k8s.io/x');
    expect(() => mirroredUrl('https://dl.k8s.io/x', 'file:///srv/mirror')).toThrow('CDK8S_OPERATOR_SDK_BINARIES_MIRROR: expected an http(s) base URL, got "file:///srv/mirror"');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
