/**
 * The prebuilt control-plane release the downloader fetches instead of building with Go: which files,
 * from where, and where their publishers state each file's digest.
 *
 * Versions are the ones `tools/control-plane/build.sh` builds, read from the same go.mod files
 * (`kube/` pins Kubernetes, `kwok/` pins kwok), so a download and a Go build give the same Kubernetes
 * and kwok. Sources, per platform (linux or darwin, amd64 or arm64):
 * - etcd and kube-apiserver: the envtest archive `envtest-v<k8s>-<os>-<arch>.tar.gz` that setup-envtest
 *   installs, found in controller-tools' envtest release index, which gives its sha512
 *   (https://github.com/kubernetes-sigs/controller-tools/blob/main/envtest-releases.yaml). Its etcd is
 *   the one that envtest release bundles, not `etcd/go.mod`'s pin, hence the cache dir's name.
 * - kube-controller-manager and kube-scheduler: the Kubernetes release binaries on dl.k8s.io, each with
 *   its published `.sha256` file (https://kubernetes.io/releases/download/#binaries).
 * - kwok: the `kwok-<os>-<arch>` asset of the kwok GitHub release; kwok publishes no checksum file, so
 *   its sha256 is the asset `digest` GitHub's release API reports
 *   (https://docs.github.com/en/rest/releases/assets).
 *
 * No digest is written here: each is fetched from its publisher at download time (setup-envtest does
 * the same with the index), and a file is refused unless it matches.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

/** An operating system and CPU architecture in Go's spelling (`GOOS`/`GOARCH`), as release file names use. */
export interface ReleasePlatform {
  readonly os: 'linux' | 'darwin';
  readonly arch: 'amd64' | 'arm64';
}

/** The pinned versions, each with its leading `v` (`v1.35.4`). */
export interface PinnedVersions {
  /** Kubernetes (kube-apiserver, kube-controller-manager, kube-scheduler), from `kube/go.mod`'s `k8s.io/kubernetes`. */
  readonly kubernetes: string;
  /** etcd that build.sh builds, from `etcd/go.mod`'s `go.etcd.io/etcd/server/v3` (only names the Go build's dir). */
  readonly etcd: string;
  /** kwok, from `kwok/go.mod`'s `sigs.k8s.io/kwok`. */
  readonly kwok: string;
}

/** Where the publisher states a file's digest. */
export type PublishedDigestSource =
  /** An envtest release index (YAML `releases.<version>.<archive>.hash`: hex sha512, and `selfLink`). */
  | { readonly kind: 'envtest-index'; readonly indexUrl: string; readonly version: string; readonly archiveName: string }
  /** A checksum file holding the hex digest of the file (dl.k8s.io's `<file>.sha256`). */
  | { readonly kind: 'checksum-file'; readonly url: string; readonly algorithm: 'sha256' }
  /** A GitHub release (REST API JSON) whose asset `assetName` carries `digest: "sha256:<hex>"`. */
  | { readonly kind: 'github-release-asset'; readonly releaseUrl: string; readonly assetName: string };

/** One file to download. */
export interface ReleaseArtifact {
  /** Short name for progress lines and errors (`envtest v1.35.4`, `kwok v0.8.0`). */
  readonly name: string;
  /** Where to get it (an envtest index's `selfLink` takes precedence when it has one). */
  readonly url: string;
  readonly digest: PublishedDigestSource;
  /**
   * What lands in the bin dir: executable name → its path inside the archive. For a bare executable
   * (`archive: 'none'`) the one entry's path is ignored: the download is the executable.
   */
  readonly executables: Readonly<Record<string, string>>;
  /** `tar.gz` (extracted with the system `tar`) or `none` (the file is the executable). */
  readonly archive: 'tar.gz' | 'none';
}

/** The whole set for one platform. */
export interface ControlPlaneRelease {
  readonly versions: PinnedVersions;
  readonly platform: ReleasePlatform;
  /** Leaf dir under `<cache>/bin/`: `<k8s>-envtest-kwok<kwok>` (etcd is envtest's). */
  readonly dirName: string;
  readonly artifacts: readonly ReleaseArtifact[];
}

/** controller-tools' envtest release index, the one setup-envtest reads by default. */
export const ENVTEST_INDEX_URL = 'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml';

/** The envtest archive keeps its executables under this dir. */
const ENVTEST_DIR_IN_ARCHIVE = 'controller-tools/envtest';

/**
 * The platform of this process.
 * @throws Error for any other than linux/darwin on x64/arm64 (no prebuilt binaries for it; build with Go)
 */
export function currentPlatform(platform: string = process.platform, arch: string = process.arch): ReleasePlatform {
  const os = platform === 'linux' || platform === 'darwin' ? platform : undefined;
  const goArch = arch === 'x64' ? 'amd64' : arch === 'arm64' ? 'arm64' : undefined;
  if (!os || !goArch) {
    throw new Error(`no prebuilt control-plane binaries for ${platform}/${arch} (only linux and darwin on x64 or arm64); build them with Go: bash tools/control-plane/build.sh`);
  }
  return { os, arch: goArch };
}

/** `tools/control-plane/`, where build.sh and the pinned modules are. */
function modulesRoot(): string {
  return join(packageRoot(), 'tools', 'control-plane');
}

/**
 * The dir holding module `dir` (`kube`, `etcd`, `kwok`) for a Kubernetes minor, as build.sh's
 * `--kubernetes-version` picks it: `tools/control-plane/v<minor>/<dir>` when the minor is an older one
 * of the tested range and it has that module, else `tools/control-plane/<dir>` (the newest).
 */
function moduleDir(dir: string, minor: string | undefined): string {
  if (minor !== undefined && minor !== defaultKubernetesMinor()) {
    const older = join(modulesRoot(), `v${minor}`, dir);
    if (existsSync(older)) return older;
  }
  return join(modulesRoot(), dir);
}

/** The version `<moduleDir>/go.mod` requires of `module`, as build.sh reads it. */
function goModVersion(dir: string, module: string, minor?: string): string {
  const file = join(moduleDir(dir, minor), 'go.mod');
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(readFileSync(file, 'utf8'));
  if (!match) throw new Error(`${file}: no version of ${module}`);
  return match[1];
}

/** `1.37` of `v1.37.2`. */
function minorOf(version: string): string {
  return version.replace(/^v/, '').split('.').slice(0, 2).join('.');
}

/** The minor of the default (newest) local control plane, `tools/control-plane/kube/go.mod`'s: `1.37`. */
export function defaultKubernetesMinor(): string {
  return minorOf(goModVersion('kube', 'k8s.io/kubernetes'));
}

/**
 * The Kubernetes minors the SDK is tested against, newest first (`['1.37', '1.35']`): the default one
 * and each `tools/control-plane/v<minor>/` with a `kube/` module, the ones build.sh's
 * `--kubernetes-version` and {@link pinnedVersions} accept. Why the oldest is what it is:
 * docs/reference/kubernetes-versions.md.
 */
export function testedKubernetesMinors(): string[] {
  const older = readdirSync(modulesRoot())
    .filter((name) => /^v1\.\d+$/.test(name) && existsSync(join(modulesRoot(), name, 'kube')))
    .map((name) => name.slice(1));
  const byNewest = (a: string, b: string): number => Number(b.split('.')[1]) - Number(a.split('.')[1]);
  return [defaultKubernetesMinor(), ...older.filter((minor) => minor !== defaultKubernetesMinor())].sort(byNewest);
}

/**
 * `version` (`1.35`, `v1.35`, or a patch such as `1.35.4` of the pinned one) as one of
 * {@link testedKubernetesMinors}; undefined stays undefined (the default).
 * @throws Error naming the value and the tested minors when it is none of them, or a patch other than the pinned one
 */
export function testedKubernetesMinor(version: string | undefined): string | undefined {
  if (version === undefined) return undefined;
  const tested = testedKubernetesMinors();
  const minor = /^v?1\.\d+(\.\d+)?$/.test(version) ? minorOf(version) : undefined;
  if (minor === undefined || !tested.includes(minor)) {
    throw new Error(`Kubernetes version ${JSON.stringify(version)} is not one the local control plane has; the tested minors are ${tested.join(', ')} (docs/reference/kubernetes-versions.md)`);
  }
  const pinned = goModVersion('kube', 'k8s.io/kubernetes', minor);
  if (version.replace(/^v/, '').split('.').length === 3 && `v${version.replace(/^v/, '')}` !== pinned) {
    throw new Error(`Kubernetes version ${JSON.stringify(version)}: the local control plane's ${minor} is ${pinned}; give the minor (${minor})`);
  }
  return minor;
}

/**
 * The versions pinned in `tools/control-plane/{kube,etcd,kwok}/go.mod`, or for an older minor of the
 * tested range in `tools/control-plane/v<minor>/` (a module it lacks is the newest's, as in build.sh).
 *
 * @param kubernetesMinor one of {@link testedKubernetesMinors} (`1.35`); default the newest
 * @throws Error naming the go.mod that lacks one, or an untested minor
 */
export function pinnedVersions(kubernetesMinor?: string): PinnedVersions {
  const minor = testedKubernetesMinor(kubernetesMinor);
  return {
    kubernetes: goModVersion('kube', 'k8s.io/kubernetes', minor),
    etcd: goModVersion('etcd', 'go.etcd.io/etcd/server/v3', minor),
    kwok: goModVersion('kwok', 'sigs.k8s.io/kwok', minor),
  };
}

/** build.sh's bin dir leaf for these versions: `<k8s>-etcd<etcd>-kwok<kwok>`. */
export function goBuildDirName(versions: PinnedVersions): string {
  return `${versions.kubernetes}-etcd${versions.etcd}-kwok${versions.kwok}`;
}

/**
 * The files of the control plane for `platform`, at their publishers' URLs.
 *
 * @param options.versions @default {@link pinnedVersions}: what build.sh builds
 */
export function controlPlaneRelease(platform: ReleasePlatform, options: { versions?: PinnedVersions } = {}): ControlPlaneRelease {
  const versions = options.versions ?? pinnedVersions();
  const { os, arch } = platform;
  const k8s = versions.kubernetes;
  const envtestArchive = `envtest-${k8s}-${os}-${arch}.tar.gz`;
  const kubeBinary = (name: string): ReleaseArtifact => {
    const url = `https://dl.k8s.io/release/${k8s}/bin/${os}/${arch}/${name}`;
    return { name: `${name} ${k8s}`, url, digest: { kind: 'checksum-file', url: `${url}.sha256`, algorithm: 'sha256' }, executables: { [name]: name }, archive: 'none' };
  };
  const kwokAsset = `kwok-${os}-${arch}`;
  return {
    versions,
    platform,
    dirName: `${k8s}-envtest-kwok${versions.kwok}`,
    artifacts: [
      {
        name: `envtest ${k8s}`,
        url: `https://github.com/kubernetes-sigs/controller-tools/releases/download/envtest-${k8s}/${envtestArchive}`,
        digest: { kind: 'envtest-index', indexUrl: ENVTEST_INDEX_URL, version: k8s, archiveName: envtestArchive },
        executables: { etcd: `${ENVTEST_DIR_IN_ARCHIVE}/etcd`, 'kube-apiserver': `${ENVTEST_DIR_IN_ARCHIVE}/kube-apiserver` },
        archive: 'tar.gz',
      },
      kubeBinary('kube-controller-manager'),
      kubeBinary('kube-scheduler'),
      {
        name: `kwok ${versions.kwok}`,
        url: `https://github.com/kubernetes-sigs/kwok/releases/download/${versions.kwok}/${kwokAsset}`,
        digest: { kind: 'github-release-asset', releaseUrl: `https://api.github.com/repos/kubernetes-sigs/kwok/releases/tags/${versions.kwok}`, assetName: kwokAsset },
        executables: { kwok: kwokAsset },
        archive: 'none',
      },
    ],
  };
}

/** `source` with each URL {@link mirroredUrl}. */
export function mirroredDigestSource(source: PublishedDigestSource, mirror: string | undefined): PublishedDigestSource {
  switch (source.kind) {
    case 'envtest-index':
      return { ...source, indexUrl: mirroredUrl(source.indexUrl, mirror) };
    case 'checksum-file':
      return { ...source, url: mirroredUrl(source.url, mirror) };
    case 'github-release-asset':
      return { ...source, releaseUrl: mirroredUrl(source.releaseUrl, mirror) };
  }
}

/**
 * `url` as served by a mirror: `https://<host>/<path>` → `<mirror>/<host>/<path>` (the tree `wget -x`
 * or `curl --create-dirs` leaves, servable by any static file server). No mirror: `url` unchanged.
 *
 * @throws Error when `mirror` is not an http(s) URL (names `CDK8S_OPERATOR_SDK_BINARIES_MIRROR`)
 */
export function mirroredUrl(url: string, mirror: string | undefined): string {
  if (!mirror) return url;
  if (!/^https?:\/\/[^/]/.test(mirror)) {
    throw new Error(`CDK8S_OPERATOR_SDK_BINARIES_MIRROR: expected an http(s) base URL, got ${JSON.stringify(mirror)}`);
  }
  const parsed = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${parsed.host}${parsed.pathname}${parsed.search}`;
}
