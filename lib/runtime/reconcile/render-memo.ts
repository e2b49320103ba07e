/**
 * The render memo: the last successful render of each CR, reused while the inputs render read are
 * unchanged, so a reconcile that only a child's status (or a related field render does not read)
 * triggered does not render again. Everything after render (diff against the cache, apply what
 * differs, prune, status) still runs on the reused children, so drift of a child is still repaired.
 *
 * The inputs, as one fingerprint (sha256) per render:
 * - the CR as render is given it: everything but `metadata.resourceVersion` and `metadata.managedFields`
 *   (they change on every write and carry nothing render may use) and `status`, which counts only when
 *   render read it ({@link RenderInputsRead.status}); its uid is part of it, so a CR deleted and created
 *   again under the same name renders;
 * - the related objects its references resolve to now ({@link findRelated}, which objects and in which
 *   order) of the declarations render looked at in `context.related` ({@link RenderInputsRead.related}),
 *   each with the top-level fields render has read of its declaration's objects
 *   ({@link RelatedReads}; every field while none was read, `metadata` without `resourceVersion`,
 *   `managedFields` and `generation`, as related-change.ts decides which related updates reconcile);
 * - the observed children (uid and resourceVersion of each), only when render read `context.observed`.
 *
 * What the operator's `status()` hook reads (observed children, related objects, the CR's status) is
 * not among them: status() runs on every reconcile, rendered or not (status-step.ts).
 *
 * The contract that makes it sound: render is a pure function of those inputs (render-children.ts: no
 * clock, randomness or network; the same inputs give byte-identical children). A render that returned
 * a `requeueAfter` is never reused: asking to run again after a delay says its output may change
 * without an event. An operator whose render reads anything else opts out with `renderSkip: false`.
 *
 * Memory: an entry holds one render's output (its children as manifests), one entry per CR that was
 * reconciled and is still cached: the controller drops a CR's entry when the CR leaves the cache (its
 * delete, or its bucket handed to another replica), so the memo grows with the CRs as the cache does
 * (measured with the memcached example: 6 MB more at the peak of 5000 CRs, 320 against 314 MB).
 * {@link MAX_RENDER_MEMO_ENTRIES} is only a safety net (the least recently reconciled going first). The
 * memo lives in one process's reconciler and is never persisted or shared: another process, or another
 * version of the operator's code, starts empty.
 */
import { createHash, type Hash } from 'node:crypto';
import { ObjectRef } from '../../operator/object-ref.js';
import { relatedIn } from './child-cache.js';
import type { RelatedReads } from '../../operator/render/related-reads.js';
import { findRelated, type RelatedLookup, type RenderInputsRead, type RenderOutput } from '../../operator/render/render-children.js';
import type { KubeObject } from '../client/kube-client.js';
import { canonicalJson } from '../../json-object.js';
import { NOISE_METADATA_FIELDS } from './related-change.js';

/**
 * Most entries a {@link RenderMemo} keeps: far above the CRs one replica caches in practice, so every
 * cached CR keeps its render. A bound of 1024 (until 2026-12-06) made a replica with more CRs than that
 * render almost every time: converging 5000 CRs, 9514 of 10 001 reconciles rendered against 1000 of 2001
 * at 1000 CRs (bench:peers `renders`), the second reconcile of a CR coming after more than 1024 others.
 */
export const MAX_RENDER_MEMO_ENTRIES = 65_536;

/** `metadata` fields of the CR left out of its fingerprint: they change on every write. */
const CR_NOISE_METADATA_FIELDS: readonly string[] = ['resourceVersion', 'managedFields'];

export interface RenderMemoOptions {
  /** Where render finds related objects. @default nothing exists */
  readonly related?: RelatedLookup;
  /** What render read of the related objects, per declaration. @default unknown: every field counts */
  readonly relatedReads?: RelatedReads;
  /** @default MAX_RENDER_MEMO_ENTRIES */
  readonly maxEntries?: number;
}

/** A render's output and the desired children made of it (with their desired-hash annotation). */
export interface RememberedRender {
  readonly output: RenderOutput;
  readonly desired: readonly KubeObject[];
}

/** The fingerprint of a render's inputs, taken right after it rendered (see {@link RenderMemo.fingerprint}). */
export interface RenderFingerprint {
  readonly digest: string;
}

interface Entry extends RememberedRender {
  readonly digest: string;
}

export class RenderMemo {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  /** Cached related object → the digest of the fields read of it (`fields` says which). Cached objects are replaced, never changed. */
  private readonly relatedDigests = new WeakMap<object, { fields: string; digest: string }>();

  constructor(private readonly options: RenderMemoOptions = {}) {
    this.maxEntries = options.maxEntries ?? MAX_RENDER_MEMO_ENTRIES;
  }

  /** Number of CRs remembered. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The last render of `key` when the inputs it read are the same now; else undefined (and the entry is
   * dropped). `observed` gives the CR's children in the caches now (called only when render read them);
   * `bucket`, sharded, the CR's bucket (its related objects made from children are looked up there).
   */
  reuse(key: string, cr: KubeObject, observed: () => readonly KubeObject[], bucket?: number): RememberedRender | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (this.fingerprint(cr, entry.output, observed, bucket).digest !== entry.digest) return undefined;
    this.entries.set(key, entry); // now the most recent
    return entry;
  }

  /**
   * The fingerprint of the inputs `output` was rendered from, given the caches now: take it in the same
   * tick as the render (the caches change only between ticks), keep it until the reconcile succeeded,
   * then {@link remember} it.
   */
  fingerprint(cr: KubeObject, output: RenderOutput, observed: () => readonly KubeObject[], bucket?: number): RenderFingerprint {
    // A render function that returned bare children or built its own output: what it read is unknown.
    const read: RenderInputsRead = output.inputsRead ?? { observed: true, status: true };
    const hash = createHash('sha256');
    hash.update(`v2 observed=${read.observed} status=${read.status} related=${read.related ? [...read.related].sort().join(',') : '*'}\n`);
    hash.update(canonicalJson(crInput(cr, read.status)));
    hash.update('\n');
    this.hashRelated(hash, output, read.related, bucket);
    if (read.observed) {
      const children = observed().map((c) => `${ObjectRef.of(c).key()} ${c.metadata?.uid ?? ''} ${c.metadata?.resourceVersion ?? ''}`);
      hash.update(`observed\n${children.sort().join('\n')}\n`);
    }
    return { digest: hash.digest('hex') };
  }

  /**
   * Remembers a successful reconcile's render of `key`, under the fingerprint taken right after it
   * rendered. A render that asked for a timed requeue is not remembered (see the module doc).
   */
  remember(key: string, fingerprint: RenderFingerprint, render: RememberedRender): void {
    this.entries.delete(key);
    if (render.output.requeueAfterMs !== undefined) return;
    this.entries.set(key, { ...render, digest: fingerprint.digest });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Drops the render of `key` (its CR is gone, or its reconcile failed). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  /**
   * The related objects `output`'s references resolve to now, of the declarations render read
   * (`keysRead`; all when unknown), each with the fields render read of its declaration.
   */
  private hashRelated(hash: Hash, output: RenderOutput, keysRead: ReadonlySet<string> | undefined, bucket: number | undefined): void {
    const { related } = findRelated({}, output.references, relatedIn(this.options.related, bucket));
    for (const key of Object.keys(related).sort()) {
      if (keysRead !== undefined && !keysRead.has(key)) continue;
      const fieldsRead = this.options.relatedReads?.renderFieldsRead(key);
      const fields = fieldsRead === undefined ? '*' : [...fieldsRead].sort().join(',');
      hash.update(`related ${JSON.stringify(key)} ${fields}\n`);
      for (const object of related[key]) hash.update(`${ObjectRef.of(object).key()} ${this.relatedDigest(object, fieldsRead, fields)}\n`);
    }
  }

  /** The digest of `object`'s fields `fieldsRead` (all when undefined), remembered per cached object. */
  private relatedDigest(object: KubeObject, fieldsRead: ReadonlySet<string> | undefined, fields: string): string {
    const known = this.relatedDigests.get(object);
    if (known && known.fields === fields) return known.digest;
    const source = object as Record<string, unknown>;
    const picked: Record<string, unknown> = {};
    for (const field of Object.keys(source)) {
      if (fieldsRead !== undefined && !fieldsRead.has(field)) continue;
      picked[field] = field === 'metadata' ? without(source.metadata, NOISE_METADATA_FIELDS) : source[field];
    }
    // A field render read that the object lacks counts as absent: `picked` has no key for it.
    const digest = createHash('sha256').update(canonicalJson(picked)).digest('hex');
    this.relatedDigests.set(object, { fields, digest });
    return digest;
  }
}

/** The CR as far as it is render's input: without write noise, and without status unless render read it. */
function crInput(cr: KubeObject, statusRead: boolean): unknown {
  const { status, ...rest } = cr as KubeObject & { status?: unknown };
  return { ...rest, metadata: without(cr.metadata, CR_NOISE_METADATA_FIELDS), ...(statusRead ? { status: status ?? null } : {}) };
}

function without(metadata: unknown, fields: readonly string[]): unknown {
  if (metadata === null || typeof metadata !== 'object') return metadata;
  const out: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
  for (const field of fields) delete out[field];
  return out;
}
