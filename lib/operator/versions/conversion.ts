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
 * Status: the runtime's status fields (`observedGeneration`, `conditions`, `children`) and the hub's
 * status fields are copied as they are into every version (every version's schema declares them,
 * spoke-status.ts); a conversion function's `status` adds the target's own fields; each version gets
 * only the status fields its schema declares. All metadata but that one annotation is copied
 * unchanged: a conversion webhook may change nothing else in metadata.
 *
 * Best effort (stored data): sources and conversion results are read with best-effort-parse.ts:
 * defaults applied, no validation against today's rules, so one stored object that today's schema
 * rejects never fails the ConversionReview (which would fail every LIST and WATCH of the kind). A value
 * whose type no longer fits its field travels in the annotation's `unconverted` list and is put back
 * when the object is converted back to its version. `options.onBestEffort` hears of each such object.
 *
 * An object without `spec` (the API server converts one field manager's fields alone during server-side
 * apply) converts without the conversion functions: see {@link withoutSpec}.
 *
 * Errors: {@link ConversionError} naming the object and the versions when an apiVersion is not one of
 * the kind's, or a conversion function throws.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-conversion
 */
import type { z } from 'zod';
import { brandClass } from '../brand.js';
import { OperatorError, formatObjectReference, type ObjectReference } from '../errors.js';
import { formatFieldPath } from '../field-path.js';
import { RUNTIME_STATUS_FIELDS, statusSchema } from '../schema/crd.js';
import { parseBestEffort } from '../schema/best-effort-parse.js';
import { declaredStatusFields, spokeStatusSchema } from './spoke-status.js';
import type { ResolvedVersion } from './versions.js';
import { messageOf } from '../../error-text.js';
import { canonicalJson, isJsonObject } from '../../json-object.js';

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
export function convertCustomResource(set: VersionSet, obj: Json, desiredApiVersion: string, options: ConversionOptions = {}): Json {
  const metadata = (obj.metadata ?? {}) as Json;
  const ref: ObjectReference = { apiVersion: String(obj.apiVersion), kind: set.kind, name: metadata.name as string, namespace: metadata.namespace as string | undefined };
  const source = versionOf(set, String(obj.apiVersion), ref, 'the object');
  const target = versionOf(set, desiredApiVersion, ref, 'the desired version');
  if (source.name === target.name) return structuredClone(obj);
  if (obj.spec === undefined) return withoutSpec(set, target, obj, desiredApiVersion);
  const hub = set.versions[0]!;
  const collect: Collect = { issues: [], unconverted: [] };
  const hubObject = source === hub ? structuredClone(obj) : spokeToHub(set, source, obj, ref, collect);
  const down: Collect = { issues: collect.issues, unconverted: [] };
  const out = target === hub ? hubObject : hubToSpoke(set, target, hubObject, ref, down);
  const unconverted = [...collect.unconverted, ...down.unconverted];
  if (options.onBestEffort && (collect.issues.length > 0 || unconverted.length > 0)) {
    const said = [...new Set(collect.issues)];
    if (unconverted.length > 0) said.push(`kept in ${CONVERSION_DATA_ANNOTATION}, not converted: ${unconverted.map((f) => `${formatFieldPath('', f.path)} (${f.version})`).join(', ')}`);
    options.onBestEffort(`${formatObjectReference(ref)}: converted to ${desiredApiVersion} best effort: ${said.join('; ')}`);
  }
  return out;
}

/**
 * An object without `spec`, converted without the conversion functions (they are written for whole
 * objects). The API server sends such partial objects during server-side apply: to rebuild the fields one
 * field manager owns (e.g. the status writer's, recorded in a spoke's managedFields) it converts just
 * those fields ("failed add back owned items" when that fails). apiVersion changes, metadata is copied, and
 * the status keeps the fields the target declares (the runtime's and the hub's hold in every version).
 */
function withoutSpec(set: VersionSet, target: ResolvedVersion, obj: Json, apiVersion: string): Json {
  const out: Json = { ...structuredClone(obj), apiVersion };
  if (obj.status !== undefined) out.status = { ...(targetStatus(set, target, userStatus(obj.status), undefined) ?? {}), ...runtimeStatus(obj.status) };
  return out;
}

/** Options of {@link convertCustomResource}. */
export interface ConversionOptions {
  /**
   * Called, once per object, when the object breaks today's rules (it is converted anyway, without
   * validation) or holds a value that cannot convert (kept in the annotation): one sentence naming the
   * object, the versions and the field paths. The webhook server logs it at warn. @default none
   */
  readonly onBestEffort?: (message: string) => void;
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
  if (!isJsonObject<Json>(status)) return undefined;
  const out: Json = { ...status };
  for (const key of RUNTIME_STATUS_FIELDS) delete out[key];
  return out;
}

function runtimeStatus(status: unknown): Json {
  const out: Json = {};
  if (!isJsonObject<Json>(status)) return out;
  for (const key of RUNTIME_STATUS_FIELDS) if (key in status) out[key] = status[key];
  return out;
}

/** What one conversion collects: rules the source breaks (read anyway) and values that cannot convert. */
interface Collect {
  readonly issues: string[];
  /** Values left out, each with the version whose object held it. */
  readonly unconverted: UnconvertedField[];
}

/** A value that could not convert: kept in the conversion-data annotation until the object is converted back to `version`. */
interface UnconvertedField {
  readonly version: string;
  readonly path: readonly (string | number)[];
  readonly value: unknown;
}

/** Reads a spec best effort (best-effort-parse.ts): never throws for the value; what it skips goes to `collect`. */
function readSpec(schema: z.ZodType, spec: unknown, version: string | undefined, what: string, collect: Collect): unknown {
  const read = parseBestEffort(schema, spec, 'spec');
  if (read.issues.length > 0) collect.issues.push(`${what}: ${read.issues.join('; ')}`);
  for (const field of read.dropped) {
    // A source's value is kept for the way back; a conversion function's wrong-typed output is only reported.
    if (version !== undefined) collect.unconverted.push({ version, path: field.path, value: field.value });
    else collect.issues.push(`${formatFieldPath('', field.path)} left out: a value of the wrong type`);
  }
  return read.value;
}

function call<T>(ref: ObjectReference, what: string, fn: () => T): T {
  try {
    return fn();
  } catch (cause) {
    if (cause instanceof ConversionError) throw cause;
    throw new ConversionError(ref, `${what} threw: ${messageOf(cause)}`, { cause });
  }
}

/** The top-level status fields `version`'s schema declares; undefined: any (cached per version). */
const heldCache = new WeakMap<ResolvedVersion, ReadonlySet<string> | undefined>();
function heldStatus(set: VersionSet, version: ResolvedVersion): ReadonlySet<string> | undefined {
  if (!heldCache.has(version)) {
    const schema = version === set.versions[0] ? statusSchema(version.status) : spokeStatusSchema(set.versions[0]!.status, version.status);
    heldCache.set(version, declaredStatusFields(schema));
  }
  return heldCache.get(version);
}

function pick(status: Json | undefined, fields: ReadonlySet<string> | undefined): Json {
  if (!status) return {};
  if (!fields) return { ...status };
  return Object.fromEntries(Object.entries(status).filter(([key]) => fields.has(key)));
}

/**
 * The user status of the target: the conversion function's (or the source's, copied), then the hub's
 * status fields as they are (every version holds them, spoke-status.ts), kept to what the target declares.
 */
function targetStatus(set: VersionSet, target: ResolvedVersion, source: Json | undefined, returned: Json | undefined): Json | undefined {
  const hubFields = heldStatus(set, set.versions[0]!);
  const out = pick({ ...(returned ?? source ?? {}), ...pick(source, hubFields) }, heldStatus(set, target));
  return source === undefined && returned === undefined ? undefined : out;
}

/** `toHub` of a spoke on parts: spoke spec read in, hub spec read out (best effort both). */
function toHubParts(set: VersionSet, spoke: ResolvedVersion, parts: Parts, meta: { apiVersion: string; metadata: Json }, ref: ObjectReference, collect: Collect): Parts {
  const hub = set.versions[0]!;
  const spec = readSpec(spoke.spec, parts.spec, spoke.name, `${set.group}/${spoke.name} spec read without validation`, collect);
  const out = call(ref, `toHub of ${spoke.name}`, () =>
    spoke.spoke!.toHub({ apiVersion: meta.apiVersion, kind: set.kind, metadata: meta.metadata as never, spec, status: parts.status }),
  );
  const hubSpec = readSpec(hub.spec, out.spec, undefined, `toHub of ${spoke.name} returned a ${set.group}/${hub.name} spec that today's rules reject`, collect);
  return { spec: hubSpec, status: targetStatus(set, hub, parts.status, out.status as Json | undefined) };
}

/** `fromHub` of a spoke on parts: hub spec read in, spoke spec read out (best effort both). */
function fromHubParts(set: VersionSet, spoke: ResolvedVersion, parts: Parts, meta: { metadata: Json }, ref: ObjectReference, collect: Collect): Parts {
  const hub = set.versions[0]!;
  const spec = readSpec(hub.spec, parts.spec, hub.name, `${set.group}/${hub.name} spec read without validation`, collect);
  const out = call(ref, `fromHub of ${spoke.name}`, () =>
    spoke.spoke!.fromHub({ apiVersion: `${set.group}/${hub.name}`, kind: set.kind, metadata: meta.metadata as never, spec, status: parts.status }),
  );
  const spokeSpec = readSpec(spoke.spec, out.spec, undefined, `fromHub of ${spoke.name} returned a ${set.group}/${spoke.name} spec that today's rules reject`, collect);
  return { spec: spokeSpec, status: targetStatus(set, spoke, parts.status, out.status as Json | undefined) };
}

/** A collector whose findings are dropped (the round-trip and merge checks re-read what the main path already reported). */
const scratch = (): Collect => ({ issues: [], unconverted: [] });

/** Removes the conversion-data annotation from `metadata` (in place); returns what it held. */
function takeSaved(metadata: Json): ConversionData {
  const annotations = isJsonObject<Json>(metadata.annotations) ? { ...(metadata.annotations as Record<string, string>) } : undefined;
  const saved = annotations?.[CONVERSION_DATA_ANNOTATION];
  if (!annotations || saved === undefined) return {};
  delete annotations[CONVERSION_DATA_ANNOTATION];
  if (Object.keys(annotations).length === 0) delete metadata.annotations;
  else metadata.annotations = annotations;
  return parseSaved(saved);
}

/** Writes the conversion-data annotation into `metadata` (in place), when there is anything to keep. */
function putSaved(metadata: Json, data: ConversionData): void {
  const json: Json = {};
  if (data.hub) {
    json.spec = data.hub.spec;
    if (data.hub.status && Object.keys(data.hub.status).length > 0) json.status = data.hub.status;
  }
  if (data.unconverted && data.unconverted.length > 0) json.unconverted = data.unconverted;
  if (Object.keys(json).length === 0) return;
  metadata.annotations = { ...(isJsonObject<Json>(metadata.annotations) ? (metadata.annotations as Record<string, string>) : {}), [CONVERSION_DATA_ANNOTATION]: canonicalJson(json) };
}

/** Puts back, into the converted object, the values saved for `version` (where the object has none); returns the others. */
function restoreUnconverted(out: Json, version: string, saved: readonly UnconvertedField[]): UnconvertedField[] {
  const others: UnconvertedField[] = [];
  for (const field of saved) {
    if (field.version !== version) {
      others.push(field);
      continue;
    }
    type Node = Record<string | number, unknown>;
    let node: unknown = out;
    for (let i = 0; i < field.path.length - 1 && (isJsonObject<Json>(node) || Array.isArray(node)); i++) {
      const segment = field.path[i]!;
      if ((node as Node)[segment] === undefined) (node as Node)[segment] = typeof field.path[i + 1] === 'number' ? [] : {};
      node = (node as Node)[segment];
    }
    const last = field.path[field.path.length - 1]!;
    if ((isJsonObject<Json>(node) || Array.isArray(node)) && (node as Node)[last] === undefined) (node as Node)[last] = structuredClone(field.value);
  }
  return others;
}

function spokeToHub(set: VersionSet, spoke: ResolvedVersion, obj: Json, ref: ObjectReference, collect: Collect): Json {
  const hub = set.versions[0]!;
  const metadata = structuredClone((obj.metadata ?? {}) as Json);
  const saved = takeSaved(metadata);
  const meta = { apiVersion: String(obj.apiVersion), metadata };
  const parts: Parts = { spec: obj.spec, status: userStatus(obj.status) };
  let result = toHubParts(set, spoke, parts, meta, ref, collect);

  const restored = saved.hub;
  if (restored) {
    // Three-way merge: what the spoke changed since the annotation was written wins; the rest is restored.
    let base: Parts | undefined;
    try {
      base = toHubParts(set, spoke, fromHubParts(set, spoke, restored, meta, ref, scratch()), meta, ref, scratch());
    } catch (err) {
      // Saved data a conversion function cannot take (edited by hand, or from an older hub schema): the spoke's view wins.
      if (!(err instanceof ConversionError)) throw err;
    }
    if (base) {
      const merged = parseBestEffort(hub.spec, merge3(restored.spec, base.spec, result.spec), 'spec');
      // A merge that breaks a rule the spoke's view alone does not (a spoke edit that contradicts a restored
      // field): the spoke's view wins. Rules the stored object broke already do not count against the merge.
      const before = new Set(parseBestEffort(hub.spec, result.spec, 'spec').issues);
      if (merged.dropped.length === 0 && merged.issues.every((issue) => before.has(issue))) {
        result = { spec: merged.value, status: merge3(restored.status, base.status, result.status) as Json | undefined };
      }
    }
  }
  const out = assemble(obj, `${set.group}/${hub.name}`, metadata, result);
  const carried = restoreUnconverted(out, hub.name, saved.unconverted ?? []);
  putSaved(metadata, { unconverted: [...carried, ...collect.unconverted] });
  return out;
}

function hubToSpoke(set: VersionSet, spoke: ResolvedVersion, hubObject: Json, ref: ObjectReference, collect: Collect): Json {
  const hub = set.versions[0]!;
  const metadata = structuredClone((hubObject.metadata ?? {}) as Json);
  const saved = takeSaved(metadata);
  const hubParts: Parts = { spec: readSpec(hub.spec, hubObject.spec, hub.name, `${set.group}/${hub.name} spec read without validation`, collect), status: targetStatus(set, hub, userStatus(hubObject.status), undefined) };
  const result = fromHubParts(set, spoke, hubParts, { metadata }, ref, collect);
  const back = toHubParts(set, spoke, result, { apiVersion: `${set.group}/${spoke.name}`, metadata }, ref, scratch());
  const lossy = !canonicalEqual(back.spec, hubParts.spec) || !canonicalEqual(back.status ?? {}, hubParts.status ?? {});
  const out = assemble(hubObject, `${set.group}/${spoke.name}`, metadata, result);
  const carried = restoreUnconverted(out, spoke.name, saved.unconverted ?? []);
  putSaved(metadata, { hub: lossy ? hubParts : undefined, unconverted: [...carried, ...collect.unconverted] });
  return out;
}

/** What the conversion-data annotation holds: the hub's parts (on a spoke object) and values that could not convert. */
interface ConversionData {
  hub?: Parts;
  unconverted?: UnconvertedField[];
}

function parseSaved(text: string): ConversionData {
  try {
    const value: unknown = JSON.parse(text);
    if (!isJsonObject<Json>(value)) return {};
    const data: ConversionData = {};
    if ('spec' in value) data.hub = { spec: value.spec, status: isJsonObject<Json>(value.status) ? value.status : undefined };
    if (Array.isArray(value.unconverted)) {
      data.unconverted = value.unconverted.filter(
        (f): f is UnconvertedField => isJsonObject<Json>(f) && typeof f.version === 'string' && Array.isArray(f.path) && f.path.length > 0 && f.path.every((s: unknown) => typeof s === 'string' || typeof s === 'number'),
      );
    }
    return data;
  } catch {
    // A hand-edited, unreadable annotation: convert from the object alone.
    return {};
  }
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
  if (isJsonObject<Json>(base) && isJsonObject<Json>(next) && isJsonObject<Json>(restored)) {
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

function canonicalEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
