/**
 * A local stand-in for the sites the control-plane downloader reads (controller-tools' envtest index and
 * release, dl.k8s.io, kwok's GitHub release and its API), laid out as a mirror
 * (`<url>/<host>/<path>`, see `mirroredUrl`) and served by node:http on 127.0.0.1. The test gives the
 * executables; the mirror makes the real envtest tar.gz (with the system tar), the `.sha256` files, the
 * index and the release JSON with their true digests. Tests then break one thing: a wrong published
 * digest or a shortened file (`writeFile`), a connection cut mid-body (`cutAfterHalf`), or one that
 * goes silent mid-body (`stallAfterHalf`).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { controlPlaneRelease, type ControlPlaneRelease, type ReleasePlatform } from '../../lib/testing/control-plane-release.js';

/** The executables the mirror serves: name → a file to copy or its content. */
export type MirrorExecutables = Record<'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok', { path: string } | { content: string }>;

export interface ReleaseMirror {
  /** Base URL for `CDK8S_OPERATOR_SDK_BINARIES_MIRROR`. */
  readonly url: string;
  readonly release: ControlPlaneRelease;
  /** Paths (`/<host>/<path>`) of every GET, in order. */
  readonly requests: string[];
  /** The mirror path of a publisher URL. */
  pathOf(publisherUrl: string): string;
  /** Replaces what the mirror serves at a publisher URL. */
  writeFile(publisherUrl: string, content: Buffer | string): void;
  /** What the mirror serves at a publisher URL. */
  readFile(publisherUrl: string): Buffer;
  /** From now on, the publisher URL's response declares the full Content-Length, sends half, and cuts the connection. */
  cutAfterHalf(publisherUrl: string): void;
  /** From now on, the publisher URL's response sends half its body and then nothing, keeping the connection open. */
  stallAfterHalf(publisherUrl: string): void;
  close(): Promise<void>;
}

const sha = (algorithm: 'sha256' | 'sha512', data: Buffer): string => createHash(algorithm).update(data).digest('hex');

/**
 * Builds the mirror for `platform` (default linux/amd64) with the pinned versions and starts serving it.
 * Call `close()` in afterAll/afterEach.
 */
export async function startReleaseMirror(executables: MirrorExecutables, platform: ReleasePlatform = { os: 'linux', arch: 'amd64' }): Promise<ReleaseMirror> {
  const release = controlPlaneRelease(platform);
  const root = mkdtempSync(join(tmpdir(), 'release-mirror-'));
  const pathOf = (publisherUrl: string): string => {
    const url = new URL(publisherUrl);
    return `/${url.host}${url.pathname}`;
  };
  const write = (publisherUrl: string, content: Buffer | string): void => {
    const file = join(root, pathOf(publisherUrl));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  };
  const bytesOf = (name: keyof MirrorExecutables): Buffer => {
    const source = executables[name];
    return 'path' in source ? readFileSync(source.path) : Buffer.from(source.content);
  };

  for (const artifact of release.artifacts) {
    const digest = artifact.digest;
    if (digest.kind === 'envtest-index') {
      // The real archive's layout: controller-tools/envtest/{etcd,kube-apiserver,kubectl}.
      const staging = mkdtempSync(join(tmpdir(), 'envtest-archive-'));
      try {
        const envtestDir = join(staging, 'controller-tools', 'envtest');
        mkdirSync(envtestDir, { recursive: true });
        for (const name of ['etcd', 'kube-apiserver'] as const) {
          writeFileSync(join(envtestDir, name), bytesOf(name));
          chmodSync(join(envtestDir, name), 0o755);
        }
        writeFileSync(join(envtestDir, 'kubectl'), '#!/bin/sh\necho kubectl\n', { mode: 0o755 });
        const archive = join(staging, digest.archiveName);
        const tar = spawnSync('tar', ['-czf', archive, '-C', staging, 'controller-tools'], { encoding: 'utf8' });
        if (tar.status !== 0) throw new Error(`tar -czf failed: ${tar.stderr}`);
        const bytes = readFileSync(archive);
        write(artifact.url, bytes);
        const entry = { hash: sha('sha512', bytes), selfLink: artifact.url };
        write(digest.indexUrl, stringify({ releases: { [digest.version]: { [digest.archiveName]: entry } } }));
      } finally {
        rmSync(staging, { recursive: true, force: true });
      }
    } else if (digest.kind === 'checksum-file') {
      const bytes = bytesOf(Object.keys(artifact.executables)[0] as keyof MirrorExecutables);
      write(artifact.url, bytes);
      write(digest.url, `${sha('sha256', bytes)}\n`);
    } else {
      const bytes = bytesOf('kwok');
      write(artifact.url, bytes);
      write(digest.releaseUrl, JSON.stringify({ tag_name: release.versions.kwok, assets: [{ name: digest.assetName, digest: `sha256:${sha('sha256', bytes)}` }] }));
    }
  }

  const cut = new Set<string>();
  const stall = new Set<string>();
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://mirror').pathname);
    requests.push(path);
    const file = join(root, path);
    let size: number;
    try {
      size = statSync(file).isFile() ? statSync(file).size : -1;
    } catch {
      size = -1;
    }
    if (size < 0 || path.includes('..')) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end(`no ${path}\n`);
      return;
    }
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
    if (cut.has(path)) {
      response.write(readFileSync(file).subarray(0, Math.floor(size / 2)), () => response.destroy());
      return;
    }
    if (stall.has(path)) {
      response.write(readFileSync(file).subarray(0, Math.floor(size / 2))); // and never end: close() cuts it
      return;
    }
    createReadStream(file).pipe(response);
  });
  await new Promise<void>((resolvePromise) => server.listen(0, '127.0.0.1', resolvePromise));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    release,
    requests,
    pathOf,
    writeFile: write,
    readFile: (publisherUrl) => readFileSync(join(root, pathOf(publisherUrl))),
    cutAfterHalf: (publisherUrl) => cut.add(pathOf(publisherUrl)),
    stallAfterHalf: (publisherUrl) => stall.add(pathOf(publisherUrl)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
