/**
 * Installs the prebuilt control-plane release (control-plane-release.ts) into the cache without Go, the
 * way setup-envtest installs envtest: each file's published digest is read first, each download is
 * checked against it, archives are extracted with the system `tar`, and only a complete, verified set
 * becomes `<cache>/bin/<k8s>-envtest-kwok<kwok>/`, by one rename of a staging dir. A failure leaves
 * nothing in the cache.
 *
 * The dir also holds `download.json`: each file's URL, digest and where the digest was stated.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isExecutable } from '../executable-file.js';
import { controlPlaneRelease, currentPlatform, mirroredDigestSource, mirroredUrl, type ControlPlaneRelease, type ReleasePlatform } from './control-plane-release.js';
import { DOWNLOAD_HEADERS, downloadFile } from './download-file.js';
import { readPublishedDigest } from './published-digest.js';

/** Options of {@link downloadControlPlaneBinaries}. */
export interface DownloadControlPlaneOptions {
  /** Cache root; binaries go to `<cacheRoot>/bin/<k8s>-envtest-kwok<kwok>/`. */
  readonly cacheRoot: string;
  /**
   * Base URL of a mirror serving `<mirror>/<host>/<path>` for each `https://<host>/<path>`.
   * @default none: the publishers' own URLs
   */
  readonly mirror?: string;
  /** @default this process's platform ({@link currentPlatform}) */
  readonly platform?: ReleasePlatform;
  /** @default {@link controlPlaneRelease} for the platform: the versions build.sh builds */
  readonly release?: ControlPlaneRelease;
  /** How long a download may receive nothing, in milliseconds. @default 60000 ms (downloadFile's) */
  readonly idleTimeoutMs?: number;
  /** Progress lines, each prefixed `[control-plane download] ` (one per tenth of each file, or every 5 s). @default none */
  readonly log?: (line: string) => void;
}

/** Whether `dir` holds every executable the release puts there. */
export function isCompleteRelease(dir: string, release: ControlPlaneRelease): boolean {
  return release.artifacts.every((artifact) => Object.keys(artifact.executables).every((name) => isExecutable(join(dir, name))));
}

/** Budget of reading an index, checksum file or release JSON (small files), in milliseconds. */
const INDEX_TIMEOUT_MS = 60_000;

async function fetchText(url: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'follow', headers: DOWNLOAD_HEADERS, signal: AbortSignal.timeout(INDEX_TIMEOUT_MS) });
  } catch (err) {
    throw new Error(`GET ${url}: ${(err as Error).message}${(err as Error).cause ? ` (${String((err as Error).cause)})` : ''}`, { cause: err });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET ${url}: HTTP ${response.status} ${response.statusText}`);
  }
  return await response.text();
}

/** `tar -xzf archive -C dir` @throws Error with tar's stderr */
async function extractTarGz(archive: string, dir: string): Promise<void> {
  await new Promise<void>((resolvePromise, reject) => {
    const tar = spawn('tar', ['-xzf', archive, '-C', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    tar.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    tar.on('error', (err) => reject(new Error(`cannot run tar to extract ${archive}: ${err.message}`, { cause: err })));
    tar.on('close', (code) => (code === 0 ? resolvePromise() : reject(new Error(`tar -xzf ${archive} failed (exit code ${code}): ${stderr.trim()}`))));
  });
}

/**
 * Downloads, verifies and installs the control-plane binaries, or returns the dir at once when it is
 * already complete. Safe to run from several processes at once: each downloads into its own staging
 * dir, the first rename wins and the others use its result.
 *
 * @returns the bin dir (`<cacheRoot>/bin/<dirName>`) with etcd, kube-apiserver,
 *   kube-controller-manager, kube-scheduler and kwok, each mode 0755
 * @throws Error naming the file and URL: a published digest that cannot be read, an HTTP failure, a
 *   truncated download, a digest mismatch (expected vs actual), or an archive without an expected
 *   executable. Nothing is left in `<cacheRoot>/bin` then.
 */
export async function downloadControlPlaneBinaries(options: DownloadControlPlaneOptions): Promise<string> {
  const release = options.release ?? controlPlaneRelease(options.platform ?? currentPlatform());
  const binRoot = join(options.cacheRoot, 'bin');
  const target = join(binRoot, release.dirName);
  if (isCompleteRelease(target, release)) return target;

  const log = options.log && ((line: string) => options.log!(`[control-plane download] ${line}`));
  await mkdir(binRoot, { recursive: true });
  const staging = await mkdtemp(join(binRoot, `.${release.dirName}.download-`));
  try {
    const record: { file: string; url: string; algorithm: string; digest: string; statedBy: string }[] = [];
    for (const [index, artifact] of release.artifacts.entries()) {
      const expected = await readPublishedDigest(mirroredDigestSource(artifact.digest, options.mirror), fetchText);
      const url = mirroredUrl(expected.url ?? artifact.url, options.mirror);
      const file = join(staging, `.artifact-${index}`);
      await downloadFile(url, file, { expected, log, label: artifact.name, idleTimeoutMs: options.idleTimeoutMs });
      record.push({ file: artifact.name, url, algorithm: expected.algorithm, digest: expected.hex, statedBy: expected.statedBy });

      if (artifact.archive === 'none') {
        const [name] = Object.keys(artifact.executables);
        await rename(file, join(staging, name));
        await chmod(join(staging, name), 0o755);
        continue;
      }
      const extracted = join(staging, `.extracted-${index}`);
      await mkdir(extracted);
      await extractTarGz(file, extracted);
      for (const [name, inArchive] of Object.entries(artifact.executables)) {
        try {
          await rename(join(extracted, inArchive), join(staging, name));
        } catch (err) {
          throw new Error(`${artifact.name}: the archive ${url} has no ${inArchive}`, { cause: err });
        }
        await chmod(join(staging, name), 0o755);
      }
      await rm(extracted, { recursive: true, force: true });
      await rm(file, { force: true });
    }
    await writeFile(join(staging, 'download.json'), `${JSON.stringify({ versions: release.versions, platform: release.platform, files: record }, null, 2)}\n`);
    await chmod(staging, 0o755);
    // An incomplete dir (a file deleted by hand) is replaced; a complete one is never touched.
    if (!isCompleteRelease(target, release)) await rm(target, { recursive: true, force: true });
    try {
      await rename(staging, target);
    } catch (err) {
      // Another process finished first (the target exists and is not empty): use its result.
      if (!isCompleteRelease(target, release)) throw new Error(`cannot move the downloaded binaries into ${target}: ${(err as Error).message}`, { cause: err });
      await rm(staging, { recursive: true, force: true });
    }
    log?.(`control-plane binaries installed in ${target}`);
    return target;
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  }
}
