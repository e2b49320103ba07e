/**
 * The CustomResourceDefinition (apiextensions.k8s.io/v1) of an operator's kind, as a plain manifest.
 *
 * Built as plain JSON (wrapped in a cdk8s `ApiObject` by the Operator) because the generated
 * `KubeCustomResourceDefinition` class drops `x-kubernetes-*` keys.
 *
 * Status contract: the status subresource is always on, and the status schema always declares what the
 * runtime writes, since the API server silently prunes undeclared fields:
 * - `observedGeneration` (int64): the `metadata.generation` the status describes;
 * - `conditions`: a list-map keyed by `type` of metav1.Condition (`Ready`, `Reconciling`, `Stalled` …);
 * - `children`: an atomic list of {@link ChildStatus}, one per child the last reconcile applied, plus
 *   the children it still has to prune: the runtime's inventory (lib/runtime/reconcile/inventory.ts);
 * - plus the fields of the operator's own status schema; a spoke version's status also declares the
 *   hub's status fields (spoke-status.ts), since server-side apply converts the object into every
 *   version that owns fields in it.
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/
 * @see https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/1623-standardize-conditions
 */
import type { z } from 'zod';
import { StructuralSchemaError } from '../errors.js';
import { toStructuralSchema, type JSONSchemaProps } from './structural-schema.js';
import { spokeStatusSchema } from '../versions/spoke-status.js';
import { RUNTIME_STATUS_FIELDS } from './runtime-status-fields.js';

/**
 * One `additionalPrinterColumns` entry (what `kubectl get` shows).
 *
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#additional-printer-columns
 */
export interface PrinterColumn {
  /** Column header, e.g. `Size`. */
  readonly name: string;
  /** OpenAPI type of the value; `date` renders as an age. */
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** Simple JSONPath into the object, e.g. `.spec.size`. */
  readonly jsonPath: string;
  /** Human-readable description of the column. @default none */
  readonly description?: string;
  /** 0 = shown by default; > 0 = only with `-o wide`. @default 0 */
  readonly priority?: number;
  /** OpenAPI format refining `type`, e.g. `int32`, `byte`, `date-time`. @default none */
  readonly format?: string;
}

/** `Ready`: the status of the `Ready` condition (True/False/Unknown). */
export const READY_COLUMN: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Status of the Ready condition',
};
/** `Age`: time since creation, as kubectl shows for every kind. */
export const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/**
 * metav1.Condition as stored in `status.conditions` (KEP-1623): the one declaration, which the runtime's
 * status writer (lib/runtime/reconcile/conditions.ts) computes and the CLI reads too.
 */
export interface Condition {
  /** CamelCase type, unique in the list (the list-map key), e.g. `Ready`. */
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** The `metadata.generation` this condition was computed for. */
  observedGeneration?: number;
  /** RFC 3339 time of the last change of `status`. */
  lastTransitionTime: string;
  /** CamelCase machine reason, non-empty, e.g. `Reconciled`. */
  reason: string;
  /** Human message; may be empty. */
  message: string;
}

/** One entry of `status.children`: a child object the last reconcile applied. */
export interface ChildStatus {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped children. */
  namespace?: string;
  /** Whether the child reports itself ready (kstatus "Current"); absent when unknown. */
  ready?: boolean;
  /** The children it waits for (`dependsOn`) before it is applied, `Kind namespace/name`; absent when it waits for none. */
  waitingFor?: string[];
}

/** The status fields the runtime writes (plus the operator's own status fields). */
export interface OperatorStatus {
  observedGeneration?: number;
  conditions?: Condition[];
  children?: ChildStatus[];
}

/**
 * Schema of metav1.Condition, matching the one controller-gen emits for `[]metav1.Condition`
 * (required type, status, lastTransitionTime, reason, message).
 */
export function conditionSchema(): JSONSchemaProps {
  return {
    type: 'object',
    description: 'A metav1.Condition: one aspect of the current state of this object.',
    properties: {
      type: {
        type: 'string',
        description: 'Type of condition in CamelCase, e.g. Ready, Reconciling, Stalled.',
        maxLength: 316,
        pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      },
      status: { type: 'string', description: 'Status of the condition.', enum: ['True', 'False', 'Unknown'] },
      observedGeneration: {
        type: 'integer',
        format: 'int64',
        minimum: 0,
        description: 'The metadata.generation the condition was set for.',
      },
      lastTransitionTime: {
        type: 'string',
        format: 'date-time',
        description: 'Last time the condition transitioned from one status to another.',
      },
      reason: {
        type: 'string',
        description: 'Programmatic identifier of the reason for the last transition, in CamelCase.',
        minLength: 1,
        maxLength: 1024,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      },
      message: { type: 'string', description: 'Human-readable details of the transition.', maxLength: 32768 },
    },
    required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  };
}

/** Schema of `status.children` (atomic list of {@link ChildStatus}). */
export function childrenSchema(): JSONSchemaProps {
  return {
    type: 'array',
    description: 'The child objects the last reconcile applied.',
    items: {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        ready: { type: 'boolean' },
        waitingFor: {
          type: 'array',
          description: 'Children this one waits for (dependsOn) before it is applied: kind namespace/name.',
          items: { type: 'string' },
        },
      },
      required: ['apiVersion', 'kind', 'name'],
    },
  };
}

export { RUNTIME_STATUS_FIELDS } from './runtime-status-fields.js';

/**
 * The status schema: the runtime's fields plus the operator's own (which must be an object and must not
 * redeclare `observedGeneration`, `conditions` or `children`). Top-level `required` of the operator's
 * status is dropped: status is written in parts, and a required field would make the runtime's status
 * patch fail until the operator writes it.
 *
 * @throws StructuralSchemaError when the operator's status schema is not an object or clashes
 */
export function statusSchema(userStatus?: z.ZodType): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = {
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation the status describes.',
    },
    conditions: {
      type: 'array',
      description: 'Standard conditions (Ready, Reconciling, Stalled), keyed by type.',
      items: conditionSchema(),
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
    children: childrenSchema(),
  };
  let extra: JSONSchemaProps = {};
  if (userStatus) {
    const user = toStructuralSchema(userStatus, 'status');
    if (user.type !== 'object') throw new StructuralSchemaError('status', 'the status schema must be an object (z.object)');
    for (const key of RUNTIME_STATUS_FIELDS) {
      if (user.properties && key in user.properties) {
        throw new StructuralSchemaError(`status.${key}`, 'is reserved: the runtime writes it');
      }
    }
    if (user.additionalProperties) throw new StructuralSchemaError('status', 'the status schema must be an object with fixed properties, not a record');
    const { properties: userProps, required: _required, type: _type, ...rest } = user;
    Object.assign(properties, userProps);
    extra = rest;
  }
  return { ...extra, type: 'object', properties };
}

/** Names of a CRD (`spec.names`). */
export interface CrdNames {
  /** CamelCase kind, e.g. `Memcached`. */
  readonly kind: string;
  /** Lowercase plural, the REST resource, e.g. `memcacheds`. */
  readonly plural: string;
  /** Lowercase singular, e.g. `memcached`. */
  readonly singular: string;
  /** Kind of the list, e.g. `MemcachedList`. */
  readonly listKind: string;
  /** kubectl short names, e.g. `['mc']`. @default none (an empty list is left out too) */
  readonly shortNames?: readonly string[];
  /** kubectl categories, e.g. `['all']`. @default none (an empty list is left out too) */
  readonly categories?: readonly string[];
}

/** Everything a CRD manifest is built from. */
export interface CrdOptions {
  /** API group, e.g. `cache.example.com`; the CRD is named `<plural>.<group>`. */
  readonly group: string;
  /** The one version's name, e.g. `v1alpha1` (ignored with `versions`). */
  readonly version: string;
  readonly names: CrdNames;
  readonly scope: 'Namespaced' | 'Cluster';
  /** zod schema of `spec` (ignored with `versions`). */
  readonly spec: z.ZodType;
  /** zod object schema of the operator's own status fields (ignored with `versions`). @default none: the runtime's fields only */
  readonly status?: z.ZodType;
  /** Extra columns; Ready and Age are appended unless a column of that name is given. @default Ready + Age only */
  readonly printerColumns?: readonly PrinterColumn[];
  /** Labels of the CRD. @default none */
  readonly labels?: Record<string, string>;
  /** Every version, when there are several (versions.ts); replaces `version`, `spec`, `status` and `printerColumns`. @default one version from those */
  readonly versions?: readonly CrdVersionOptions[];
  /** `spec.conversion` (webhook-configurations.ts builds it). @default none: the API server's `None` strategy */
  readonly conversion?: Record<string, unknown>;
  /** Annotations of the CRD, e.g. cert-manager's `cert-manager.io/inject-ca-from`. @default none */
  readonly annotations?: Record<string, string>;
  /** The schema of `metadata` in every version (restrictions on `metadata.name`, cr-name-rule.ts). @default `{ type: object }` */
  readonly metadataSchema?: JSONSchemaProps;
}

/** One entry of `spec.versions` of a multi-version CRD. */
export interface CrdVersionOptions {
  /** Version name, e.g. `v1`. */
  readonly name: string;
  /** Whether the API server serves it. */
  readonly served: boolean;
  /** Whether objects are stored in it (exactly one version is). */
  readonly storage: boolean;
  /** Marks it deprecated: clients get a Warning header. @default false */
  readonly deprecated?: boolean;
  /** The warning text. @default the API server's: "<group>/<version> <Kind> is deprecated" */
  readonly deprecationWarning?: string;
  /** zod schema of `spec` in this version. */
  readonly spec: z.ZodType;
  /** zod object schema of this version's own status fields. @default none: the runtime's fields only */
  readonly status?: z.ZodType;
  /** A spoke's: the hub's status schema; its fields are added to this version's status (spoke-status.ts). @default none */
  readonly hubStatus?: z.ZodType;
  /** Extra columns of this version; Ready and Age are appended as in {@link CrdOptions.printerColumns}. @default Ready + Age only */
  readonly printerColumns?: readonly PrinterColumn[];
}

/**
 * The printer columns: the operator's own, then Ready and Age (unless the operator declares a column
 * with that name). Copies: the result may be changed.
 *
 * @param own the operator's columns; default `[]`: Ready and Age only
 */
export function printerColumns(own: readonly PrinterColumn[] = []): PrinterColumn[] {
  const names = new Set(own.map((c) => c.name));
  return [...own, ...[READY_COLUMN, AGE_COLUMN].filter((c) => !names.has(c.name))].map((c) => ({ ...c }));
}

/**
 * Builds the CRD manifest. `spec` is required in the object when the spec schema rejects `undefined`
 * (as offline validation does).
 *
 * @throws StructuralSchemaError naming the field when the spec or status schema is not structural
 */
export function buildCrdManifest(options: CrdOptions): Record<string, unknown> {
  const versions = options.versions ?? [
    { name: options.version, served: true, storage: true, spec: options.spec, status: options.status, printerColumns: options.printerColumns },
  ];
  const names: Record<string, unknown> = {
    kind: options.names.kind,
    listKind: options.names.listKind,
    plural: options.names.plural,
    singular: options.names.singular,
  };
  if (options.names.shortNames?.length) names.shortNames = [...options.names.shortNames];
  if (options.names.categories?.length) names.categories = [...options.names.categories];
  const metadata: Record<string, unknown> = { name: `${options.names.plural}.${options.group}` };
  if (options.labels) metadata.labels = { ...options.labels };
  if (options.annotations && Object.keys(options.annotations).length > 0) metadata.annotations = { ...options.annotations };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: {
      group: options.group,
      names,
      scope: options.scope,
      versions: versions.map((version) => crdVersion(options.names, version, options.metadataSchema)),
      ...(options.conversion ? { conversion: options.conversion } : {}),
    },
  };
}

function crdVersion(crdNames: CrdNames, version: CrdVersionOptions, metadataSchema: JSONSchemaProps | undefined): Record<string, unknown> {
  const spec = toStructuralSchema(version.spec, 'spec');
  const specRequired = !version.spec.safeParse(undefined).success;
  const openAPIV3Schema: JSONSchemaProps = {
    type: 'object',
    description: `${crdNames.kind} is the Schema for the ${crdNames.plural} API.`,
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
      metadata: metadataSchema ?? { type: 'object' },
      spec,
      status: version.hubStatus ? spokeStatusSchema(version.hubStatus, version.status) : statusSchema(version.status),
    },
    ...(specRequired ? { required: ['spec'] } : {}),
  };
  return {
    name: version.name,
    served: version.served,
    storage: version.storage,
    ...(version.deprecated ? { deprecated: true } : {}),
    ...(version.deprecationWarning !== undefined ? { deprecationWarning: version.deprecationWarning } : {}),
    schema: { openAPIV3Schema },
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns(version.printerColumns),
  };
}
