/**
 * Several API versions of one operator's kind: the hub (the operator's own `version`, `spec` and
 * `status`, the one `render` works on) and spoke versions, each with its own zod schemas and a pair of
 * conversion functions to and from the hub (kubebuilder's hub-and-spoke model).
 *
 * Contract:
 * - exactly one version is the storage version (`storage: true` on one spoke, else the hub);
 * - the hub is always served (the runtime watches the hub version);
 * - a version may be `deprecated`, with an optional `deprecationWarning` (the API server sends it to
 *   clients as a `Warning` header);
 * - conversion functions get the object read by the source version's schema (defaults applied) and
 *   return the target's `spec` (and, optionally, the user part of `status`), which is read by the
 *   target's schema. Best effort: a stored object that today's rules reject is read without validation
 *   (best-effort-parse.ts), so a conversion function may see values its schema's rules forbid (e.g.
 *   `size: 0` stored before `.min(1)`). What a version lacks is kept in an annotation (see
 *   conversion.ts), so `toHub(fromHub(x))` may drop fields without losing them;
 * - every version's status holds the runtime's and the hub's status fields (spoke-status.ts): a spoke's
 *   own status field must not redeclare a hub status field with another schema.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/
 * @see https://book.kubebuilder.io/multiversion-tutorial/conversion-concepts (hubs and spokes)
 */
import type { z } from 'zod';
import type { CustomResourceMetadata } from '../custom-resource.js';
import { statusSchema, type CrdVersionOptions, type PrinterColumn } from '../schema/crd.js';
import { StructuralSchemaError } from '../errors.js';
import { spokeStatusSchema } from './spoke-status.js';

/** What a conversion function reads: the source version's object, spec parsed by its schema. */
export interface ConvertibleObject<Spec, Status> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: CustomResourceMetadata;
  readonly spec: Spec;
  /** The user part of status (the runtime's observedGeneration, conditions and children are copied for you). Written in parts: any field may be missing. */
  readonly status?: Partial<Status>;
}

/** What a conversion function returns: the target version's `spec`, and optionally its user status. */
export interface ConvertedParts<Spec, Status> {
  readonly spec: Spec;
  /** @default the source's user status fields, copied as they are */
  readonly status?: Partial<Status>;
}

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, unknown>;
type In<S> = S extends z.ZodType ? z.input<S> : Record<string, unknown>;

/**
 * A served version besides the hub, with its conversion to and from the hub. Build it with
 * {@link spokeVersion} so the conversion functions are typed by both schemas.
 */
export interface SpokeVersionProps<HubSpec extends z.ZodType, HubStatus extends z.ZodType | undefined, Spec extends z.ZodType, Status extends z.ZodType | undefined> {
  /** The hub's spec schema (the Operator's `spec`): only for typing, and checked to be the same object. */
  readonly hubSpec: HubSpec;
  /** The hub's status schema, if the operator declares one. @default none */
  readonly hubStatus?: HubStatus;
  /** Version name, e.g. `v1alpha1`: a DNS-1035 label of the form `v<N>[alpha|beta<M>]` is recommended. */
  readonly name: string;
  /** zod schema of this version's `spec`. */
  readonly spec: Spec;
  /** zod object schema of this version's extra status fields. @default none */
  readonly status?: Status;
  /** Whether the API server serves this version. @default true */
  readonly served?: boolean;
  /** Whether objects are stored in this version (then the hub is not). @default false: the hub is stored */
  readonly storage?: boolean;
  /** Marks the version deprecated: clients get a Warning header on every request. @default false */
  readonly deprecated?: boolean;
  /** The warning text (≤ 256 characters). @default the API server's: "<group>/<version> <Kind> is deprecated" */
  readonly deprecationWarning?: string;
  /** Printer columns of this version (JSON paths differ between versions). @default Ready + Age */
  readonly printerColumns?: PrinterColumn[];
  /** This version → hub. Pure; no clock, randomness or network. Throwing fails the request that needed the conversion. */
  toHub(obj: ConvertibleObject<Out<Spec>, Out<HubStatus>>): ConvertedParts<In<HubSpec>, In<HubStatus>>;
  /** Hub → this version. Pure, as `toHub`. */
  fromHub(obj: ConvertibleObject<Out<HubSpec>, Out<HubStatus>>): ConvertedParts<In<Spec>, In<Status>>;
}

/**
 * A spoke version with its types erased, as the Operator keeps it ({@link spokeVersion} returns it).
 * Each field means what it does in {@link SpokeVersionProps}, with the same defaults.
 */
export interface SpokeVersion {
  readonly hubSpec: z.ZodType;
  readonly name: string;
  readonly spec: z.ZodType;
  readonly status?: z.ZodType;
  readonly served?: boolean;
  readonly storage?: boolean;
  readonly deprecated?: boolean;
  readonly deprecationWarning?: string;
  readonly printerColumns?: PrinterColumn[];
  toHub(obj: ConvertibleObject<unknown, unknown>): ConvertedParts<unknown, unknown>;
  fromHub(obj: ConvertibleObject<unknown, unknown>): ConvertedParts<unknown, unknown>;
}

/**
 * Declares a spoke version. Returns its argument, typed so `toHub` / `fromHub` see both schemas:
 *
 * ```ts
 * spokeVersion({
 *   hubSpec: MemcachedSpec, name: 'v1alpha1', spec: MemcachedV1alpha1Spec, deprecated: true,
 *   toHub: (old) => ({ spec: { replicas: old.spec.size } }),
 *   fromHub: (hub) => ({ spec: { size: hub.spec.replicas } }),
 * })
 * ```
 */
export function spokeVersion<HubSpec extends z.ZodType, Spec extends z.ZodType, HubStatus extends z.ZodType | undefined = undefined, Status extends z.ZodType | undefined = undefined>(
  props: SpokeVersionProps<HubSpec, HubStatus, Spec, Status>,
): SpokeVersion {
  // cast: SpokeVersion erases the version's own spec/status types (props were checked against the generic signature)
  return props as unknown as SpokeVersion;
}

/** One version as the CRD lists it: a {@link CrdVersionOptions} whose `deprecated` is decided. */
export interface ResolvedVersion extends CrdVersionOptions {
  readonly deprecated: boolean;
  /** Undefined for the hub. */
  readonly spoke?: SpokeVersion;
}

/** Hub facts {@link resolveVersions} needs. */
export interface HubVersion {
  readonly name: string;
  readonly spec: z.ZodType;
  readonly status?: z.ZodType;
  readonly printerColumns?: readonly PrinterColumn[];
}

/**
 * Checks the declared versions and returns every version, the hub first, then spokes in declaration
 * order. Returns problems (one sentence each, naming the field) instead of throwing, so the Operator
 * reports them with its construct path.
 */
export function resolveVersions(hub: HubVersion, spokes: readonly SpokeVersion[], nameProblem: (name: string) => string | undefined): { versions: ResolvedVersion[]; problems: string[] } {
  const problems: string[] = [];
  const seen = new Set([hub.name]);
  spokes.forEach((spoke, i) => {
    const at = `versions[${i}]`;
    const why = nameProblem(spoke.name);
    if (why !== undefined) problems.push(`${at}.name ${JSON.stringify(spoke.name)} ${why}`);
    if (seen.has(spoke.name)) problems.push(`${at}.name ${JSON.stringify(spoke.name)} is declared twice (the hub is ${JSON.stringify(hub.name)})`);
    seen.add(spoke.name);
    if (spoke.hubSpec !== hub.spec) problems.push(`${at}.hubSpec must be the operator's own spec schema (the hub's)`);
    if (typeof spoke.toHub !== 'function' || typeof spoke.fromHub !== 'function') problems.push(`${at}: toHub and fromHub must be functions`);
    if (spoke.deprecationWarning !== undefined && !spoke.deprecated) problems.push(`${at}.deprecationWarning needs deprecated: true`);
    if (spoke.deprecationWarning !== undefined && spoke.deprecationWarning.length > 256) problems.push(`${at}.deprecationWarning is longer than 256 characters`);
    if (spoke.storage && spoke.served === false) problems.push(`${at}: the storage version must be served`);
    const clash = statusClash(hub.status, spoke.status);
    if (clash !== undefined) problems.push(`${at}.${clash.path} (${spoke.name}): ${clash.problem}`);
  });
  const storing = spokes.filter((s) => s.storage);
  if (storing.length > 1) problems.push(`versions: ${storing.map((s) => s.name).join(' and ')} are both marked storage; exactly one version is stored`);
  const versions: ResolvedVersion[] = [
    { name: hub.name, served: true, storage: storing.length === 0, deprecated: false, spec: hub.spec, status: hub.status, printerColumns: hub.printerColumns },
    ...spokes.map((spoke) => ({
      name: spoke.name,
      served: spoke.served ?? true,
      storage: spoke.storage ?? false,
      deprecated: spoke.deprecated ?? false,
      deprecationWarning: spoke.deprecationWarning,
      spec: spoke.spec,
      status: spoke.status,
      hubStatus: hub.status,
      printerColumns: spoke.printerColumns,
      spoke,
    })),
  ];
  return { versions, problems };
}


/** Why a spoke's status schema cannot be built with the hub's fields; undefined when it can, or when the hub's own status schema is the problem (reported for the hub). */
function statusClash(hubStatus: z.ZodType | undefined, spokeStatus: z.ZodType | undefined): StructuralSchemaError | undefined {
  try {
    if (hubStatus) statusSchema(hubStatus);
  } catch (err) {
    if (err instanceof StructuralSchemaError) return undefined;
    throw err;
  }
  try {
    spokeStatusSchema(hubStatus, spokeStatus);
    return undefined;
  } catch (err) {
    if (err instanceof StructuralSchemaError) return err;
    throw err;
  }
}
