/**
 * The two review protocols of the webhook server, as pure-ish handlers (request body in, response body
 * out; admission hooks may read the cluster through `context.get`):
 *
 * - **ConversionReview** (`apiextensions.k8s.io/v1`) on `/convert`: every object is converted to
 *   `desiredAPIVersion` by the operator of its kind (lib/operator/versions/conversion.ts), best effort: an object
 *   that today's rules reject is converted anyway (defaults applied, not validated; the API server
 *   validates writes itself), so one old stored object never fails a LIST or WATCH of the kind. Only an
 *   object no operator here converts, or a conversion function that throws, fails the whole review
 *   (`result.status: Failure` with the message), as the API server expects; the request that needed it
 *   then fails and nothing is written.
 * - **AdmissionReview** (`admission.k8s.io/v1`) on one path per hook: validating hooks return every
 *   violation; a denial is a 422 `Invalid` Status with one `FieldValueInvalid` cause per field, the form
 *   of the API server's own schema errors, so kubectl prints `The Memcached "x" is invalid:` and a line
 *   per field. Mutating hooks answer with a JSON Patch (`patchType: JSONPatch`).
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-request-and-response
 * @see https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request
 */
import { CustomResourceValidationError } from '../../operator/errors.js';
import type { AdmissionContext, AdmissionObjectReference, FieldViolation } from '../../operator/admission.js';
import { resolveKind, type ChildKind } from '../../operator/kinds.js';
import type { Operator } from '../../operator/operator.js';
import type { JSONSchemaProps } from '../../operator/schema/structural-schema.js';
import type { KubeClient, KubeObject } from '../client/kube-client.js';
import { withBucketLabel } from '../sharding/bucket-label.js';
import { crBucketLabelVerdict } from '../sharding/cr-bucket-label.js';
import { type Clock } from '../clock.js';
import { errorFields, silentLogger, type Logger } from '../logger.js';
import { AdmissionDeadline, AdmissionDeadlineError } from './admission-deadline.js';
import { exemptUpdate, introducedViolations } from './admission-ratchet.js';
import { jsonPatch } from './json-patch.js';
import { ResourceClient } from '../client/resource-client.js';

type Json = Record<string, unknown>;

const schemas = new WeakMap<Operator, Map<string, JSONSchemaProps | undefined>>();

/**
 * The `openAPIV3Schema` of the version of `apiVersion` (`<group>/<version>`) in `operator`'s CRD, or
 * undefined when it has no such version (read once per operator and version).
 */
function versionSchema(operator: Operator, apiVersion: string): JSONSchemaProps | undefined {
  let byVersion = schemas.get(operator);
  if (!byVersion) schemas.set(operator, (byVersion = new Map()));
  if (!byVersion.has(apiVersion)) {
    const crd = operator.customResourceDefinition.toJson() as { spec?: { versions?: { name: string; schema?: { openAPIV3Schema?: JSONSchemaProps } }[] } };
    const version = apiVersion.slice(apiVersion.indexOf('/') + 1);
    byVersion.set(apiVersion, crd.spec?.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema);
  }
  return byVersion.get(apiVersion);
}

/** A review request that is not a well-formed review: the server answers 400 with this message. */
export class BadReviewError extends Error {}

/** Options of {@link handleConversionReview}. */
export interface ConversionReviewOptions {
  /** Hears of each object converted best effort (see conversion.ts `onBestEffort`). @default none */
  readonly onBestEffort?: (message: string) => void;
}

/** Handles one ConversionReview body; returns the ConversionReview to send back. */
export function handleConversionReview(operators: readonly Operator[], body: unknown, options: ConversionReviewOptions = {}): Json {
  const review = body as { apiVersion?: string; kind?: string; request?: { uid?: string; desiredAPIVersion?: string; objects?: Json[] } };
  if (review?.kind !== 'ConversionReview' || typeof review.request?.uid !== 'string' || typeof review.request.desiredAPIVersion !== 'string' || !Array.isArray(review.request.objects)) {
    throw new BadReviewError('expected an apiextensions.k8s.io/v1 ConversionReview with request.uid, request.desiredAPIVersion and request.objects');
  }
  const { uid, desiredAPIVersion, objects } = review.request;
  const respond = (response: Json): Json => ({ apiVersion: review.apiVersion ?? 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, ...response } });
  try {
    const convertedObjects = objects.map((obj) => {
      const group = String(obj.apiVersion).split('/')[0];
      const operator = operators.find((o) => o.crd.group === group && o.crd.kind === obj.kind && o.versions.length > 1);
      if (!operator) throw new Error(`no operator here converts ${String(obj.kind)} (${String(obj.apiVersion)})`);
      return operator.convert(obj, desiredAPIVersion, { onBestEffort: options.onBestEffort });
    });
    return respond({ convertedObjects, result: { status: 'Success' } });
  } catch (err) {
    return respond({ convertedObjects: [], result: { status: 'Failure', message: (err as Error).message } });
  }
}

/** What an admission review needs besides the operator. */
export interface AdmissionReviewOptions {
  readonly type: 'validate' | 'mutate';
  /** Reads objects for `context.get` (a live GET). */
  readonly client: KubeClient;
  /** Exempt updates are logged at debug, answers at the deadline at warn. @default silent */
  readonly logger?: Logger;
  /** Times the review's deadline (admission-deadline.ts). @default the system clock */
  readonly clock?: Clock;
  /**
   * Sharded (`run --sharding`): the ring's bucket count. The mutating hook then stamps the CR's bucket
   * label (`operator.cdk8s.io/shard-bucket`, lib/runtime/sharding/cr-bucket-label.ts, the same verdict as
   * the runtime's stamp) at CREATE, in the same JSON Patch as the operator's own mutation, so the CR is
   * stored labelled and no replica patches it later. Not for a CREATE by `generateName` (the name, and so
   * the bucket, is not known yet at admission): the runtime stamps that one. @default none: no stamp
   */
  readonly shardBucketCount?: number;
}

interface AdmissionRequest {
  uid: string;
  operation: string;
  namespace?: string;
  name?: string;
  object?: Json;
  oldObject?: Json;
  dryRun?: boolean;
  userInfo?: { username?: string; groups?: string[] };
}

/** At most this many characters per warning: the API server may truncate longer ones. */
const MAX_WARNING_CHARS = 256;

/**
 * Handles one AdmissionReview body for `operator`'s validating or mutating hook; returns the AdmissionReview to send back.
 *
 * - CREATE and UPDATE reach the hooks; other operations are allowed.
 * - An UPDATE of a terminating object (old `deletionTimestamp`) or one that changes only `metadata` is
 *   allowed without running either hook (admission-ratchet.ts), so a finalizer can always be removed.
 * - Validation ratchets (KEP-4008, admission-ratchet.ts): on UPDATE only violations the update
 *   introduces deny, both today's zod schema's and `validateAdmission`'s; kept ones come back as
 *   `warnings` (kubectl prints them as `Warning:`). The old object is never validated: when today's
 *   schema rejects it, the hook gets it as stored.
 * - The hook (its reads and its function) is bounded by the webhook's `timeoutSeconds` minus a margin
 *   (admission-deadline.ts); at the deadline the answer is a 504 `Timeout` denial naming the read in flight
 *   (under `failurePolicy: Ignore`: allowed, with that message as a warning).
 * - A hook that throws: a 500 `InternalError` denial with its message.
 */
export async function handleAdmissionReview(operator: Operator, body: unknown, options: AdmissionReviewOptions): Promise<Json> {
  const review = body as { apiVersion?: string; kind?: string; request?: AdmissionRequest };
  const request = review?.request;
  if (review?.kind !== 'AdmissionReview' || typeof request?.uid !== 'string' || typeof request.operation !== 'string') {
    throw new BadReviewError('expected an admission.k8s.io/v1 AdmissionReview with request.uid and request.operation');
  }
  const respond = (response: Json): Json => ({ apiVersion: review.apiVersion ?? 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, ...response } });
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return respond({ allowed: true });
  const logger = options.logger ?? silentLogger;
  const withNamespace = (obj: Json | undefined): Json | undefined => {
    if (!obj || !operator.crd.namespaced) return obj;
    const metadata = (obj.metadata ?? {}) as Json;
    return metadata.namespace ? obj : { ...obj, metadata: { ...metadata, namespace: request.namespace ?? 'default' } };
  };
  const object = withNamespace(request.object);
  if (!object) throw new BadReviewError(`${request.operation} review without request.object`);
  const oldObject = request.operation === 'UPDATE' ? withNamespace(request.oldObject) : undefined;
  if (request.operation === 'UPDATE' && !oldObject) throw new BadReviewError('UPDATE review without request.oldObject');
  const name = String((object.metadata as Json | undefined)?.name ?? request.name ?? '');
  const ref = `${operator.crd.kind} ${operator.crd.namespaced ? `${String((object.metadata as Json).namespace)}/` : ''}${name}`;

  const exempt = exemptUpdate(object, oldObject);
  if (exempt) {
    logger.debug({ webhook: options.type, object: ref, exempt }, 'admission hook skipped: the update is exempt');
    return respond({ allowed: true });
  }
  if (options.type === 'mutate' ? !operator.mutateAdmission : !operator.validateAdmission) return respond({ allowed: true });

  const timeoutSeconds = operator.webhook?.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  const deadline = new AdmissionDeadline(timeoutSeconds, options.clock);
  const context = admissionContext(operator, request, options.client, deadline);
  try {
    if (options.type === 'mutate') {
      // cast: the hook returns the operator's typed CR; the review carries it as JSON
      const hooked = (await deadline.run('mutateAdmission', () => operator.mutateAdmission!(object as never, context))) as unknown as Json;
      const mutated = request.operation === 'CREATE' && options.shardBucketCount !== undefined ? withCrBucketLabel(hooked, options.shardBucketCount) : hooked;
      const moved = identityChange(object, mutated);
      if (moved) return respond(deny(operator, name, [{ path: moved, message: 'Forbidden: the mutating hook must not change it' }]));
      const patch = jsonPatch(object, mutated);
      if (patch.length === 0) return respond({ allowed: true });
      return respond({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') });
    }
    // Today's zod schema, ratcheted too: its rules the CRD schema cannot express (refinements) are enforced here.
    let cr: ReturnType<Operator['parseCustomResource']>;
    let schemaViolations: FieldViolation[] = [];
    try {
      cr = operator.parseCustomResource(object);
    } catch (err) {
      if (!(err instanceof CustomResourceValidationError)) throw err;
      schemaViolations = err.fields.map((f) => ({ path: f.path, message: f.reason }));
      cr = object as never; // as stored: the API server applied the CRD's defaults
    }
    // The CRD's schema of the object's version: list-map items are correlated by their keys (KEP-4008).
    const schema = versionSchema(operator, String(object.apiVersion ?? ''));
    const schemaIntroduced = introducedViolations(schemaViolations, object, oldObject, schema);
    if (schemaIntroduced.length > 0) return respond(deny(operator, name, schemaIntroduced));
    const old = oldObject ? parseOrAsStored(operator, oldObject) : undefined;
    const violations = await deadline.run('validateAdmission', () => operator.validateAdmission!(cr, old, context));
    const introduced = introducedViolations(violations, object, oldObject, schema);
    if (introduced.length > 0) return respond(deny(operator, name, introduced));
    const kept = [...schemaViolations, ...violations];
    return respond(kept.length === 0 ? { allowed: true } : { allowed: true, warnings: kept.map((v) => keptWarning(v)) });
  } catch (err) {
    if (err instanceof AdmissionDeadlineError) {
      const hook = options.type === 'mutate' ? 'mutating' : 'validating';
      const message = `${ref}: the ${hook} hook of ${operator.operatorName} timed out: ${err.message}`;
      const ignore = operator.webhook?.failurePolicy === 'Ignore';
      logger.warn({ webhook: options.type, object: ref, waitingFor: err.waitingFor, budgetMs: err.budgetMs, allowed: ignore }, `admission hook timed out; ${ignore ? 'allowed (failurePolicy Ignore)' : 'denied'}`);
      if (ignore) return respond({ allowed: true, warnings: [truncate(message)] });
      return respond({ allowed: false, status: { status: 'Failure', code: 504, reason: 'Timeout', message, details: { name, group: operator.crd.group, kind: operator.crd.kind } } });
    }
    const hook = options.type === 'mutate' ? 'mutating' : 'validating';
    logger.warn({ webhook: options.type, object: ref, ...errorFields(err) }, 'admission hook failed; denied');
    return respond({ allowed: false, status: { status: 'Failure', code: 500, reason: 'InternalError', message: `${ref}: the ${hook} hook of ${operator.operatorName} failed: ${(err as Error).message}` } });
  } finally {
    deadline.done();
  }
}

/** The API server's default `timeoutSeconds`, for an operator without a resolved webhook (tests). */
const DEFAULT_TIMEOUT_SECONDS = 10;

/** The old object parsed by today's schema, or as stored when today's schema rejects it (it is never validated). */
function parseOrAsStored(operator: Operator, oldObject: Json): ReturnType<Operator['parseCustomResource']> {
  try {
    return operator.parseCustomResource(oldObject);
  } catch (err) {
    if (err instanceof CustomResourceValidationError) return oldObject as never;
    throw err;
  }
}

function keptWarning(v: FieldViolation): string {
  return truncate(`${v.path}: ${v.message} (unchanged by this update, so allowed)`);
}

function truncate(text: string): string {
  return text.length <= MAX_WARNING_CHARS ? text : `${text.slice(0, MAX_WARNING_CHARS - 1)}…`;
}

/** The API server's own `Invalid` Status: kubectl prints one line per cause. */
function deny(operator: Operator, name: string, violations: readonly FieldViolation[]): Json {
  const { kind, group } = operator.crd;
  return {
    allowed: false,
    status: {
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: `${kind}.${group} ${JSON.stringify(name)} is invalid: ${violations.map((v) => `${v.path}: ${v.message}`).join(', ')}`,
      details: { name, group, kind, causes: violations.map((v) => ({ reason: 'FieldValueInvalid', message: v.message, field: v.path })) },
    },
  };
}

/** `cr` with its bucket label stamped or repaired (cr-bucket-label.ts); as it is when right, or when it has no name yet (generateName). */
function withCrBucketLabel(cr: Json, bucketCount: number): Json {
  const object = cr as KubeObject;
  if (!object.metadata?.name) return cr;
  const verdict = crBucketLabelVerdict(object, bucketCount);
  return verdict.action === 'none' ? cr : withBucketLabel(object, verdict.bucket);
}

function identityChange(before: Json, after: Json): string | undefined {
  const meta = (o: Json) => (o.metadata ?? {}) as Json;
  if (after.apiVersion !== before.apiVersion) return 'apiVersion';
  if (after.kind !== before.kind) return 'kind';
  if (meta(after).name !== meta(before).name) return 'metadata.name';
  if (meta(after).namespace !== meta(before).namespace) return 'metadata.namespace';
  return undefined;
}

function admissionContext(operator: Operator, request: AdmissionRequest, client: KubeClient, deadline: AdmissionDeadline): AdmissionContext {
  const reads: ChildKind[] = (operator.webhook?.reads ?? []).map((k) => ({ apiVersion: k.apiVersion, kind: k.kind, plural: k.plural, namespaced: k.namespaced }));
  return {
    operation: request.operation as 'CREATE' | 'UPDATE',
    dryRun: request.dryRun === true,
    userInfo: { username: request.userInfo?.username, groups: request.userInfo?.groups },
    signal: deadline.signal,
    async get(ref: AdmissionObjectReference) {
      const kind = resolveKind({ apiVersion: ref.apiVersion, kind: ref.kind }, reads);
      const what = `reading ${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
      return deadline.read(what, async (signal) => {
        return new ResourceClient(client).getIfExists<Json>(kind, ref.namespace, ref.name, { signal });
      });
    },
  };
}
