import { Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import {
  MANAGED_BY_LABEL,
  NAME_LABEL,
  Operator,
  selectorLabels,
  spokeVersion,
  type AdmissionContext,
  type CustomResource,
  type FieldViolation,
  type RenderContext,
} from 'cdk8s-operator-sdk';
import { EXAMPLE_DEPLOYMENT } from '../example-deployment.js';
import { loadSamples } from '../load-samples.js';
import { restrictedContainerSecurity, restrictedPodSecurity } from '../pod-security.js';

/** v1beta1, the hub and storage version: `size` became `replicas`, and the cache size is configurable. */
export const MemcachedSpec = z.object({
  replicas: z.int().min(1).max(100).describe('Number of memcached pods (1..100).'),
  cache: z
    .object({ memoryMiB: z.int().min(16).max(64).default(64).describe('Item memory in MiB (memcached -m), 16..64.') })
    .default({ memoryMiB: 64 })
    .describe('Cache settings.'),
});
export type MemcachedSpec = z.output<typeof MemcachedSpec>;

/** The tutorial's status: the names of the memcached pods. */
export const MemcachedStatus = z.object({
  nodes: z.array(z.string()).describe('Names of the memcached pods, sorted.'),
});

/** v1alpha1, the Operator SDK tutorial's spec: how many memcached pods to run. Served, deprecated. */
export const MemcachedV1alpha1Spec = z.object({
  size: z.int().min(1).max(100).describe('Number of memcached pods (1..100).'),
});
export type MemcachedV1alpha1Spec = z.output<typeof MemcachedV1alpha1Spec>;

/** v1alpha1 ↔ v1beta1: `size` is `replicas`; v1alpha1 has no cache settings (kept in an annotation by the SDK). */
export const MEMCACHED_V1ALPHA1 = spokeVersion({
  hubSpec: MemcachedSpec,
  name: 'v1alpha1',
  spec: MemcachedV1alpha1Spec,
  deprecated: true,
  deprecationWarning: 'cache.example.com/v1alpha1 Memcached is deprecated; use cache.example.com/v1beta1 (spec.size is spec.replicas)',
  printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'Number of memcached pods' }],
  toHub: (old) => ({ spec: { replicas: old.spec.size } }),
  fromHub: (hub) => ({ spec: { size: hub.spec.replicas } }),
});

/**
 * ConfigMap a cluster admin may create in a namespace to cap Memcacheds there: `data.maxReplicas`.
 * The validating hook reads it (a rule CEL in the CRD cannot express: it depends on another object).
 */
export const MEMCACHED_POLICY_CONFIGMAP = 'memcached-policy';

/** The image the tutorial uses; its `memcache` user is uid/gid 11211. */
export const MEMCACHED_IMAGE = 'memcached:1.6.17-alpine';
export const MEMCACHED_UID = 11211;
export const MEMCACHED_PORT = 11211;

/**
 * The classic Operator SDK tutorial operator as a construct: a `cache.example.com/v1beta1` Memcached
 * becomes a Deployment of `spec.replicas` memcached pods and a ClusterIP Service in front of them, and
 * reports its pods' names in `status.nodes` from its `status()` hook (its Pods are a related kind, selected by label; the runtime
 * caches only the metadata of Pods labelled `app.kubernetes.io/name=memcached`).
 * `v1alpha1` (`spec.size`) is still served, deprecated, and converted by the operator's webhook.
 */
export class MemcachedOperator extends Operator<typeof MemcachedSpec, typeof MemcachedStatus> {
  constructor(scope: Construct, id = 'memcached-operator') {
    super(scope, id, {
      group: 'cache.example.com',
      version: 'v1beta1',
      kind: 'Memcached',
      shortNames: ['mc'],
      printerColumns: [{ name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Number of memcached pods' }],
      spec: MemcachedSpec,
      status: MemcachedStatus,
      related: {
        pods: {
          apiVersion: 'v1',
          kind: 'Pod',
          references: (cr) => [{ selector: selectorLabels(cr, 'memcached') }],
          // One cache serves every Memcached: only Pods carrying the label all their pods share (see
          // selectorLabels), not every Pod of the cluster; and only their metadata (status() reads names
          // and deletionTimestamp), not their spec and status. They are the Pods of our Deployments, so
          // a sharded replica caches only those of its buckets (createdFromChildren).
          scope: { labelSelector: `${NAME_LABEL}=memcached`, metadataOnly: true, createdFromChildren: true },
        },
      },
      versions: [MEMCACHED_V1ALPHA1],
      webhook: { reads: [{ apiVersion: 'v1', kind: 'ConfigMap' }, { apiVersion: 'v1', kind: 'Service' }] },
      examples: loadSamples<z.input<typeof MemcachedSpec>>(new URL('./sample.yaml', import.meta.url)),
      deployment: EXAMPLE_DEPLOYMENT,
    });
  }

  render(cr: CustomResource<MemcachedSpec>, scope: Construct): void {
    const name = cr.metadata.name;
    // The pods of this Memcached, for the Deployment, the Service and `related.pods` (see selectorLabels).
    const labels = selectorLabels(cr, 'memcached');

    const deployment = new kplus.Deployment(scope, 'deployment', {
      metadata: { name },
      replicas: cr.spec.replicas, // cdk8s-plus defaults to 2
      select: false, // by `labels`, not by cdk8s-plus's construct-path label
      podMetadata: { labels },
      automountServiceAccountToken: false, // memcached never talks to the API server
      securityContext: restrictedPodSecurity(MEMCACHED_UID),
      containers: [{
        name: 'memcached',
        image: MEMCACHED_IMAGE,
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT, // a pinned tag; cdk8s-plus defaults to Always
        args: [`-m=${cr.spec.cache.memoryMiB}`, '-o', 'modern', '-v'],
        ports: [{ name: 'memcached', number: MEMCACHED_PORT }],
        readiness: kplus.Probe.fromTcpSocket({ port: MEMCACHED_PORT }),
        liveness: kplus.Probe.fromTcpSocket({ port: MEMCACHED_PORT }),
        // -m=64 caps the cache at 64 MiB; the rest is connection buffers. cdk8s-plus's defaults (1 CPU /
        // 512Mi requested) would reserve far more than memcached uses.
        resources: {
          cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.millis(500) },
          memory: { request: Size.mebibytes(96), limit: Size.mebibytes(128) },
        },
        securityContext: restrictedContainerSecurity(MEMCACHED_UID),
      }],
    });
    deployment.select(kplus.LabelSelector.of({ labels }));

    new kplus.Service(scope, 'service', {
      metadata: { name },
      // `labels` again: given the Deployment (or exposeViaService), cdk8s-plus selects its construct-path label
      selector: kplus.Pods.select(scope, 'pods', { labels }),
      ports: [{ name: 'memcached', port: MEMCACHED_PORT, targetPort: MEMCACHED_PORT }],
    });
  }

  /**
   * `status.nodes`: the names of this Memcached's pods, from what exists (not part of render, so a Pod
   * appearing or going does not render the Deployment and Service again).
   */
  override status(_cr: CustomResource<MemcachedSpec>, context: RenderContext): z.input<typeof MemcachedStatus> {
    // Pods on their way out are not nodes any more.
    const pods = context.related.pods.filter((pod) => pod.metadata.deletionTimestamp === undefined);
    return { nodes: pods.map((pod) => pod.metadata.name).sort() };
  }

  /**
   * Denies what the CRD's schema cannot: more replicas than the namespace's policy ConfigMap allows, and
   * a name whose Service already exists but belongs to something else (render would take it over).
   */
  override async validateAdmission(cr: CustomResource<MemcachedSpec>, _old: CustomResource<MemcachedSpec> | undefined, context: AdmissionContext): Promise<FieldViolation[]> {
    const namespace = cr.metadata.namespace ?? 'default';
    const violations: FieldViolation[] = [];
    const policy = await context.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: MEMCACHED_POLICY_CONFIGMAP });
    const max = Number((policy?.data as Record<string, string> | undefined)?.maxReplicas);
    if (Number.isInteger(max) && cr.spec.replicas > max) {
      violations.push({ path: 'spec.replicas', message: `Invalid value: ${cr.spec.replicas}: must be at most ${max} (ConfigMap ${namespace}/${MEMCACHED_POLICY_CONFIGMAP}, maxReplicas)` });
    }
    const service = await context.get({ apiVersion: 'v1', kind: 'Service', namespace, name: cr.metadata.name });
    const labels = (service?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
    if (service && labels[MANAGED_BY_LABEL] !== this.operatorName) {
      violations.push({ path: 'metadata.name', message: `Invalid value: ${JSON.stringify(cr.metadata.name)}: Service ${namespace}/${cr.metadata.name} already exists and is not managed by ${this.operatorName}` });
    }
    return violations;
  }

  /** Labels every Memcached `app.kubernetes.io/name: memcached`, so `kubectl get mc -l` finds them all. */
  override mutateAdmission(cr: CustomResource<z.input<typeof MemcachedSpec>>): CustomResource<z.input<typeof MemcachedSpec>> {
    if (cr.metadata.labels?.[NAME_LABEL] === 'memcached') return cr;
    return { ...cr, metadata: { ...cr.metadata, labels: { ...cr.metadata.labels, [NAME_LABEL]: 'memcached' } } };
  }
}
