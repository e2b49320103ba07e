/**
 * Reads the digest a publisher states for a release file (see control-plane-release.ts for the three
 * kinds of source): the expected value a download is checked against before it lands in the cache.
 */
import { parse } from 'yaml';
import type { PublishedDigestSource } from './control-plane-release.js';

/** A digest to check a download against. */
export interface ExpectedDigest {
  readonly algorithm: 'sha256' | 'sha512';
  /** Lowercase hex. */
  readonly hex: string;
  /** Where the digest was read (a URL), for error messages. */
  readonly statedBy: string;
  /** The file's URL as the source names it (an envtest index's `selfLink`), when it names one. */
  readonly url?: string;
}

/** GETs `url` and returns its body as text. @throws Error naming the URL and the HTTP status */
export type FetchText = (url: string) => Promise<string>;

const HEX_LENGTH = { sha256: 64, sha512: 128 } as const;

function hexDigest(algorithm: 'sha256' | 'sha512', value: unknown, where: string): string {
  const hex = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!new RegExp(`^[0-9a-f]{${HEX_LENGTH[algorithm]}}$`).test(hex)) {
    throw new Error(`${where}: expected a hex ${algorithm} digest, got ${JSON.stringify(value)}`);
  }
  return hex;
}

/**
 * The digest `source` states, read with `fetchText` (URLs already mirrored by the caller).
 *
 * @throws Error naming the URL when it cannot be read, or names no digest for the file (for an envtest
 *   index: which versions of that minor it has instead)
 */
export async function readPublishedDigest(source: PublishedDigestSource, fetchText: FetchText): Promise<ExpectedDigest> {
  switch (source.kind) {
    case 'checksum-file': {
      const text = await fetchText(source.url);
      // dl.k8s.io's files hold the bare digest; `sha256sum` output (digest, spaces, name) reads the same.
      return { algorithm: source.algorithm, hex: hexDigest(source.algorithm, text.trim().split(/\s+/)[0], source.url), statedBy: source.url };
    }
    case 'envtest-index': {
      const index = parse(await fetchText(source.indexUrl)) as { releases?: Record<string, Record<string, { hash?: unknown; selfLink?: unknown }>> } | null;
      const releases = index?.releases ?? {};
      const entry = releases[source.version]?.[source.archiveName];
      if (!entry) {
        const minor = source.version.split('.').slice(0, 2).join('.');
        const sameMinor = Object.keys(releases).filter((version) => version.startsWith(`${minor}.`));
        throw new Error(
          `the envtest index ${source.indexUrl} has no ${source.archiveName} under releases.${source.version} ` +
            `(its ${minor} releases: ${sameMinor.join(', ') || 'none'})`,
        );
      }
      const where = `${source.indexUrl} releases.${source.version}.${source.archiveName}.hash`;
      return {
        algorithm: 'sha512', // controller-tools publishes sha512 digests, as setup-envtest checks them
        hex: hexDigest('sha512', entry.hash, where),
        statedBy: source.indexUrl,
        url: typeof entry.selfLink === 'string' && entry.selfLink ? entry.selfLink : undefined,
      };
    }
    case 'github-release-asset': {
      const release = JSON.parse(await fetchText(source.releaseUrl)) as { assets?: { name?: string; digest?: unknown }[] };
      const asset = release.assets?.find((candidate) => candidate.name === source.assetName);
      if (!asset) throw new Error(`the release ${source.releaseUrl} has no asset ${source.assetName}`);
      const digest = typeof asset.digest === 'string' ? asset.digest : '';
      if (!digest.startsWith('sha256:')) {
        throw new Error(`the release ${source.releaseUrl} states no sha256 digest for ${source.assetName} (digest: ${JSON.stringify(asset.digest ?? null)}); refusing to download it unchecked`);
      }
      return { algorithm: 'sha256', hex: hexDigest('sha256', digest.slice('sha256:'.length), `${source.releaseUrl} ${source.assetName}.digest`), statedBy: source.releaseUrl };
    }
  }
}
