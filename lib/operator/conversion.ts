/**
 * Conversion of a custom resource between the versions of its kind, through the hub, without loss.
 *
 * Expected flow of `convertCustomResource(versions, obj, desiredApiVersion)`:
 * 1. source → hub: the source version's `toHub` (skipped when the source is the hub). If the object
 *    carries {@link CONVERSION_DATA_ANNOTATION} (written by an earlier hub → spoke conversion), the hub
 *    fields are restored from it with a three-way merge: fields the spoke client changed come from
 *    `toHub(spoke)`, every other field from the annotation. The annotation is removed.
 * 2. hub → target: the target's `fromHub` (skipped when the target is the hub). When the target cannot
 *    hold the whole hub object (`toHub(fromHub(hub))` differs from `hub`), the hub's `spec` and user
 *    `status` are written, as JSON, into {@link CONVERSION_DATA_ANNOTATION} of the result (the
 *    convention of kubebuilder projects such as cluster-api's `conversion-data`).
 *
 * Guarantees (checked by property-based tests for the examples): hub → spoke → hub gives back the hub
 * object; spoke → hub → spoke gives back the spoke object; a spoke client's update of the fields it
 * knows keeps the fields only the hub has.
 *
 * The runtime's status fields (`observedGeneration`, `conditions`, `children`) and all metadata but that
 * one annotation are copied unchanged: a conversion webhook may change nothing else in metadata.
 *
 * Errors: {@link ConversionError} naming the object, the versions and the field paths when a source is
 * invalid for its schema or a conversion function throws or returns an invalid spec.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-conversion
 */
import type { z } from 'zod';
import { brandClass } from './brand.js';
import { OperatorError, formatObjectReference, type ObjectReference } from './errors.js';
import { formatFieldPath } from './validate.js';
import { RUNTIME_STATUS_FIELDS } from './crd.js';
import type { ResolvedVersion } from './versions.js';

/** Holds the hub's `spec` and user `status` on an object converted to a version that cannot hold them (JSON). */
export const CONVERSION_DATA_ANNOTATION = 'operator.cdk8s.io/conversion-data';

/** A conversion failed; `message` names the object, both versions and what went wrong. */
export class ConversionError extends OperatorError {
  static {
    brandClass(this, 'ConversionError');
  }

  override readonly reason = 'ConversionFailed';
  constructor(
    readonly object: ObjectReference,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${formatObjectReference(object)}: ${detail}`, options);
  }
}

/** The versions of one kind (from the Operator), hub first. */
export interface VersionSet {
  readonly group: string;
  readonly kind: string;
  /** Every version; `versions[0]` is the hub. */
  readonly versions: readonly ResolvedVersion[];
}

type Json = Record<string, unknown>;

interface Parts {
  spec: unknown;
  status?: Json;
}

/**
 * Converts `obj` (any version of the kind) to `desiredApiVersion` (`<group>/<version>`). Returns a new
 * object; `obj` is not modified. An object already at the desired version comes back as a copy.
 *
 * @throws ConversionError (see the module doc)
 */
export function convertCustomResource(set: VersionSet, obj: Json, desiredApiVersion: string): Json {
  const metadata = (obj.metadata ?? {}) as Json;
  const ref: ObjectReference = { apiVersion: String(obj.apiVersion), kind: set.kind, name: metadata.name as string, namespace: metadata.namespace as string | undefined };
  const source = versionOf(set, String(obj.apiVersion), ref, 'the object');
  const target = versionOf(set, desiredApiVersion, ref, 'the desired version');
  if (source.name === target.name) return structuredClone(obj);
  const hub = set.versions[0]!;
  const hubObject = source === hub ? structuredClone(obj) : spokeToHub(set, source, obj, ref);
  return target === hub ? hubObject : hubToSpoke(set, target, hubObject, ref);
}

function versionOf(set: VersionSet, apiVersion: string, ref: ObjectReference, what: string): ResolvedVersion {
  const slash = apiVersion.indexOf('/');
  const group = apiVersion.slice(0, slash);
  const name = apiVersion.slice(slash + 1);
  const version = group === set.group ? set.versions.find((v) => v.name === name) : undefined;
  if (!version) {
    throw new ConversionError(ref, `${what}'s apiVersion ${JSON.stringify(apiVersion)} is not a version of ${set.kind}.${set.group} (${set.versions.map((v) => `${set.group}/${v.name}`).join(', ')})`);
  }
  return version;
}

function userStatus(status: unknown): Json | undefined {
  if (!isPlainObject(status)) return undefined;
  const out: Json = { ...status };
  for (const key of RUNTIME_STATUS_FIELDS) delete out[key];
  return out;
}

function runtimeStatus(status: unknown): Json {
  const out: Json = {};
  if (!isPlainObject(status)) return out;
  for (const key of RUNTIME_STATUS_FIELDS) if (key in status) out[key] = status[key];
  return out;
}

function parseSpec(schema: z.ZodType, spec: unknown, ref: ObjectReference, what: string): unknown {
  const result = schema.safeParse(spec);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${formatFieldPath('spec', i.path as PropertyKey[])}: ${i.message}`);
  throw new ConversionError(ref, `${what}: ${issues.join('; ')}`);
}

function call<T>(ref: ObjectReference, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (cause) {
    if (cause instanceof ConversionError) throw cause;
    throw new ConversionError(ref, `${what} threw: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** `toHub` of a spoke on parts: spoke spec parsed in, hub spec parsed out. */
function toHubParts(set: VersionSet, spoke: ResolvedVersion, parts: Parts, meta: { apiVersion: string; metadata: Json }, ref: ObjectReference): Parts {
  const hub = set.versions[0]!;
  const spec = parseSpec(spoke.spec, parts.spec, ref, `not a valid ${set.group}/${spoke.name} spec`);
  const out = call(ref, `toHub of ${spoke.name}`, () =>
    spoke.spoke!.toHub({ apiVersion: meta.apiVersion, kind: set.kind, metadata: meta.metadata as never, spec, status: parts.status }),
  );
  const hubSpec = parseSpec(hub.spec, out.spec, ref, `toHub of ${spoke.name} returned an invalid ${set.group}/${hub.name} spec`);
  return { spec: hubSpec, status: out.status === undefined ? parts.status : (out.status as Json) };
}

/** `fromHub` of a spoke on parts: hub spec parsed in, spoke spec parsed out. */
function fromHubParts(set: VersionSet, spoke: ResolvedVersion, parts: Parts, meta: { metadata: Json }, ref: ObjectReference): Parts {
  const hub = set.versions[0]!;
  const spec = parseSpec(hub.spec, parts.spec, ref, `not a valid ${set.group}/${hub.name} spec`);
  const out = call(ref, `fromHub of ${spoke.name}`, () =>
    spoke.spoke!.fromHub({ apiVersion: `${set.group}/${hub.name}`, kind: set.kind, metadata: meta.metadata as never, spec, status: parts.status }),
  );
  const spokeSpec = parseSpec(spoke.spec, out.spec, ref, `fromHub of ${spoke.name} returned an invalid ${set.group}/${spoke.name} spec`);
  return { spec: spokeSpec, status: out.status === undefined ? parts.status : (out.status as Json) };
}

function spokeToHub(set: VersionSet, spoke: ResolvedVersion, obj: Json, ref: ObjectReference): Json {
  const hub = set.versions[0]!;
  const metadata = structuredClone((obj.metadata ?? {}) as Json);
  const annotations = isPlainObject(metadata.annotations) ? { ...(metadata.annotations as Record<string, string>) } : undefined;
  const saved = annotations?.[CONVERSION_DATA_ANNOTATION];
  if (annotations && saved !== undefined) {
    delete annotations[CONVERSION_DATA_ANNOTATION];
    if (Object.keys(annotations).length === 0) delete metadata.annotations;
    else metadata.annotations = annotations;
  }
  const meta = { apiVersion: String(obj.apiVersion), metadata };
  const parts: Parts = { spec: obj.spec, status: userStatus(obj.status) };
  let result = toHubParts(set, spoke, parts, meta, ref);

  const restored = saved === undefined ? undefined : parseSaved(saved);
  if (restored) {
    // Three-way merge: what the spoke changed since the annotation was written wins; the rest is restored.
    let base: Parts | undefined;
    try {
      base = toHubParts(set, spoke, fromHubParts(set, spoke, restored, meta, ref), meta, ref);
    } catch (err) {
      // Saved data that is no longer a valid hub object (edited by hand, or from an older hub schema): the spoke's view wins.
      if (!(err instanceof ConversionError)) throw err;
    }
    if (base) {
      const spec = merge3(restored.spec, base.spec, result.spec);
      const merged = hub.spec.safeParse(spec);
      // A merge that no longer fits the hub's schema (a spoke edit that contradicts a restored field): the spoke's view wins.
      if (merged.success) result = { spec: merged.data, status: merge3(restored.status, base.status, result.status) as Json | undefined };
    }
  }
  return assemble(obj, `${set.group}/${hub.name}`, metadata, result);
}

function hubToSpoke(set: VersionSet, spoke: ResolvedVersion, hubObject: Json, ref: ObjectReference): Json {
  const metadata = structuredClone((hubObject.metadata ?? {}) as Json);
  const hubParts: Parts = { spec: parseSpec(set.versions[0]!.spec, hubObject.spec, ref, `not a valid ${set.group}/${set.versions[0]!.name} spec`), status: userStatus(hubObject.status) };
  const result = fromHubParts(set, spoke, hubParts, { metadata }, ref);
  const back = toHubParts(set, spoke, result, { apiVersion: `${set.group}/${spoke.name}`, metadata }, ref);
  const lossy = !canonicalEqual(back.spec, hubParts.spec) || !canonicalEqual(back.status ?? {}, hubParts.status ?? {});
  const had = isPlainObject(metadata.annotations) && CONVERSION_DATA_ANNOTATION in metadata.annotations;
  if (lossy || had) {
    const annotations = isPlainObject(metadata.annotations) ? { ...(metadata.annotations as Record<string, string>) } : {};
    delete annotations[CONVERSION_DATA_ANNOTATION];
    if (lossy) {
      annotations[CONVERSION_DATA_ANNOTATION] = canonicalJson({ spec: hubParts.spec, ...(hubParts.status && Object.keys(hubParts.status).length > 0 ? { status: hubParts.status } : {}) });
    }
    if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
    else delete metadata.annotations;
  }
  return assemble(hubObject, `${set.group}/${spoke.name}`, metadata, result);
}

function parseSaved(text: string): Parts | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (isPlainObject(value) && 'spec' in value) return { spec: value.spec, status: isPlainObject(value.status) ? value.status : undefined };
  } catch {
    // A hand-edited, unreadable annotation: convert from the spoke alone.
  }
  return undefined;
}

function assemble(source: Json, apiVersion: string, metadata: Json, parts: Parts): Json {
  const out: Json = { ...structuredClone(source), apiVersion, metadata, spec: parts.spec };
  if (source.status !== undefined || (parts.status && Object.keys(parts.status).length > 0)) {
    out.status = { ...(parts.status ?? {}), ...runtimeStatus(source.status) };
  }
  return out;
}

/**
 * Three-way merge of plain JSON: where `next` differs from `base`, `next`'s value (a key missing from
 * `next` is removed); elsewhere `restored`'s. Arrays and scalars are replaced whole.
 */
export function merge3(restored: unknown, base: unknown, next: unknown): unknown {
  if (canonicalEqual(base, next)) return restored;
  if (isPlainObject(base) && isPlainObject(next) && isPlainObject(restored)) {
    const out: Json = { ...restored };
    for (const key of new Set([...Object.keys(base), ...Object.keys(next)])) {
      const own = (o: Json) => (Object.hasOwn(o, key) ? o[key] : undefined);
      const value = merge3(own(restored), own(base), own(next));
      if (value === undefined) delete out[key];
      else Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return next === undefined ? undefined : structuredClone(next);
}

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON with object keys sorted (undefined-valued keys dropped): equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isPlainObject(value)) {
    const out: Json = {};
    for (const key of Object.keys(value).sort()) if (value[key] !== undefined) out[key] = sortKeys(value[key]);
    return out;
  }
  return value;
}

function canonicalEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
