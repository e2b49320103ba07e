import { Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { INSTANCE_LABEL, NAME_LABEL, toLabelValue } from '../../lib/operator/labels.js';
import { Operator, type CustomResource, type RenderContext, type RenderResult } from '../../lib/operator/operator.js';
import { EXAMPLE_DEPLOYMENT } from '../example-deployment.js';
import { loadSamples } from '../load-samples.js';
import { restrictedContainerSecurity, restrictedPodSecurity } from '../pod-security.js';
import { serviceFor } from '../service-for.js';
import { selectByLabels } from '../stable-selector.js';

/** The Operator SDK tutorial's spec: how many memcached pods to run. */
export const MemcachedSpec = z.object({
  size: z.int().min(1).max(100).describe('Number of memcached pods (1..100).'),
});
export type MemcachedSpec = z.output<typeof MemcachedSpec>;

/** The tutorial's status: the names of the memcached pods. */
export const MemcachedStatus = z.object({
  nodes: z.array(z.string()).describe('Names of the memcached pods, sorted.'),
});

/** The image the tutorial uses; its `memcache` user is uid/gid 11211. */
export const MEMCACHED_IMAGE = 'memcached:1.6.17-alpine';
export const MEMCACHED_UID = 11211;
export const MEMCACHED_PORT = 11211;

/** The labels of one Memcached's pods (the Deployment's selector). */
function podLabels(name: string): Record<string, string> {
  return { [NAME_LABEL]: 'memcached', [INSTANCE_LABEL]: toLabelValue(name) };
}

/**
 * The classic Operator SDK tutorial operator as a construct: a `cache.example.com/v1alpha1` Memcached
 * becomes a Deployment of `spec.size` memcached pods and a ClusterIP Service in front of them, and
 * reports its pods' names in `status.nodes` (its Pods are a related kind, selected by label).
 */
export class MemcachedOperator extends Operator<typeof MemcachedSpec, typeof MemcachedStatus> {
  constructor(scope: Construct, id = 'memcached-operator') {
    super(scope, id, {
      group: 'cache.example.com',
      version: 'v1alpha1',
      kind: 'Memcached',
      shortNames: ['mc'],
      printerColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'Number of memcached pods' }],
      spec: MemcachedSpec,
      status: MemcachedStatus,
      related: { pods: { apiVersion: 'v1', kind: 'Pod', references: (cr) => [{ selector: podLabels(cr.metadata.name) }] } },
      examples: loadSamples<z.input<typeof MemcachedSpec>>(new URL('./sample.yaml', import.meta.url)),
      deployment: EXAMPLE_DEPLOYMENT,
    });
  }

  render(cr: CustomResource<MemcachedSpec>, scope: Construct, context: RenderContext): RenderResult<z.input<typeof MemcachedStatus>> {
    const name = cr.metadata.name;
    const labels = podLabels(name);

    const deployment = new kplus.Deployment(scope, 'deployment', {
      metadata: { name },
      replicas: cr.spec.size, // cdk8s-plus defaults to 2
      select: false, // see selectByLabels
      automountServiceAccountToken: false, // memcached never talks to the API server
      securityContext: restrictedPodSecurity(MEMCACHED_UID),
      containers: [{
        name: 'memcached',
        image: MEMCACHED_IMAGE,
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT, // a pinned tag; cdk8s-plus defaults to Always
        args: ['-m=64', '-o', 'modern', '-v'],
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
    selectByLabels(deployment, labels);

    serviceFor(scope, 'service', {
      name,
      selectLabels: labels,
      ports: [{ name: 'memcached', port: MEMCACHED_PORT, targetPort: MEMCACHED_PORT }],
    });

    // Pods on their way out are not nodes any more.
    const pods = context.related.pods.filter((pod) => pod.metadata.deletionTimestamp === undefined);
    return { status: { nodes: pods.map((pod) => pod.metadata.name).sort() } };
  }
}
