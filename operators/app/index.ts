import { Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { Operator, listMap, selectorLabels, type CustomResource, type RenderContext, type RenderResult } from 'cdk8s-operator-sdk';
import { EXAMPLE_DEPLOYMENT } from '../example-deployment.js';
import { loadSamples } from '../load-samples.js';
import { restrictedContainerSecurity, restrictedPodSecurity } from '../pod-security.js';
import { contentHash } from './config-hash.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

export const AppEnvVar = z.object({
  name: z.string().regex(ENV_VAR_NAME).describe('Environment variable name.'),
  value: z.string().default('').describe('Value; an empty string when left out.'),
});

/** A stateless web application. */
export const AppSpec = z.object({
  image: z.string().min(1).describe('Container image, e.g. ghcr.io/example/hello:1.4.2.'),
  replicas: z.int().min(0).max(100).default(1).describe('Pod count (0..100).'),
  port: z.int().min(1).max(65535).default(8080).describe('Port the container listens on; the Service exposes the same port.'),
  runAsUser: z.int().min(1).default(65532).describe('Numeric uid the container runs as (non-root).'),
  env: listMap(AppEnvVar, ['name']).default([]).describe('Environment variables, a list-map keyed by name.'),
  ingress: z.object({
    host: z.string().max(253).regex(DNS_SUBDOMAIN).describe('Host name routed to the Service.'),
    className: z.string().optional().describe('IngressClass; the cluster default when left out.'),
  }).optional().describe('Expose the app through an Ingress.'),
  // Keys are checked by a refinement: a CRD can't restrict map keys by pattern.
  config: z.record(z.string(), z.string()).superRefine((data, ctx) => {
    for (const key of Object.keys(data)) {
      if (!CONFIG_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: `invalid file name: must match ${CONFIG_KEY.source}` });
    }
  }).optional().describe('Files mounted read-only under /config (file name → content); a change rolls the pods.'),
  configMapRef: z.object({
    name: z.string().min(1).max(253).regex(DNS_SUBDOMAIN).describe('Name of a ConfigMap in the App\'s namespace.'),
  }).optional().describe('An existing ConfigMap mounted read-only under /etc/app; a change to it rolls the pods. The App waits until it exists.'),
});
export type AppSpec = z.output<typeof AppSpec>;

/** What an App reports. */
export const AppStatus = z.object({
  url: z.string().describe('Where the app answers: http://<ingress host>/ with an Ingress, else the Service\'s cluster DNS name.'),
});

/** Pod template annotation that carries the ConfigMap's content hash, so a config change rolls the pods. */
export const CONFIG_HASH_ANNOTATION = 'apps.example.com/config-sha256';
export const CONFIG_MOUNT_PATH = '/config';
/** Pod template annotation that carries the referenced ConfigMap's content hash. */
export const CONFIG_REF_HASH_ANNOTATION = 'apps.example.com/config-ref-sha256';
export const CONFIG_REF_MOUNT_PATH = '/etc/app';

/**
 * An `apps.example.com/v1alpha1` App becomes a Deployment and a Service, plus an Ingress when
 * `spec.ingress` is set and a ConfigMap (mounted at /config) when `spec.config` is set. An existing
 * ConfigMap named by `spec.configMapRef` (a related object) is mounted at /etc/app, and its content hash
 * rolls the pods when it changes. `status.url` says where the app answers.
 */
export class AppOperator extends Operator<typeof AppSpec, typeof AppStatus> {
  constructor(scope: Construct, id = 'app-operator') {
    super(scope, id, {
      group: 'apps.example.com',
      version: 'v1alpha1',
      kind: 'App',
      spec: AppSpec,
      status: AppStatus,
      related: { configMap: { apiVersion: 'v1', kind: 'ConfigMap', references: 'spec.configMapRef.name' } },
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.image' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Host', type: 'string', jsonPath: '.spec.ingress.host' },
        { name: 'URL', type: 'string', jsonPath: '.status.url', priority: 1 },
      ],
      examples: loadSamples<z.input<typeof AppSpec>>(new URL('./sample.yaml', import.meta.url)),
      deployment: EXAMPLE_DEPLOYMENT,
    });
  }

  render(cr: CustomResource<AppSpec>, scope: Construct, context: RenderContext): RenderResult<z.input<typeof AppStatus>> {
    const { name } = cr.metadata;
    const { spec } = cr;
    const labels = selectorLabels(cr, 'app');

    const deployment = new kplus.Deployment(scope, 'deployment', {
      metadata: { name },
      replicas: spec.replicas, // cdk8s-plus defaults to 2
      select: false, // by `labels`, not by cdk8s-plus's construct-path label
      podMetadata: { labels },
      automountServiceAccountToken: false,
      securityContext: restrictedPodSecurity(spec.runAsUser),
    });
    deployment.select(kplus.LabelSelector.of({ labels }));

    const container = deployment.addContainer({
      name: 'app',
      image: spec.image,
      imagePullPolicy: pullPolicy(spec.image),
      ports: [{ name: 'http', number: spec.port }],
      envVariables: Object.fromEntries(spec.env.map((v) => [v.name, kplus.EnvValue.fromValue(v.value)])),
      readiness: kplus.Probe.fromTcpSocket({ port: spec.port }),
      // cdk8s-plus requests 1 CPU / 512Mi by default, too much for most web apps.
      resources: {
        cpu: { request: kplus.Cpu.millis(100), limit: kplus.Cpu.millis(1000) },
        memory: { request: Size.mebibytes(128), limit: Size.mebibytes(256) },
      },
      securityContext: restrictedContainerSecurity(spec.runAsUser),
    });
    // The root filesystem is read-only; most runtimes still want a writable /tmp.
    container.mount('/tmp', kplus.Volume.fromEmptyDir(scope, 'tmp', 'tmp'));

    if (spec.config !== undefined) {
      const configMap = new kplus.ConfigMap(scope, 'config', { metadata: { name: `${name}-config` }, data: spec.config });
      container.mount(CONFIG_MOUNT_PATH, kplus.Volume.fromConfigMap(scope, 'config-volume', configMap, { name: 'config' }), { readOnly: true });
      deployment.podMetadata.addAnnotation(CONFIG_HASH_ANNOTATION, contentHash(spec.config));
    }

    // A required reference: the runtime waits (Ready=False, ReferenceNotFound) until it exists.
    const [referenced] = context.related.configMap;
    if (spec.configMapRef !== undefined && referenced !== undefined) {
      const configMap = kplus.ConfigMap.fromConfigMapName(scope, 'config-ref', spec.configMapRef.name);
      container.mount(CONFIG_REF_MOUNT_PATH, kplus.Volume.fromConfigMap(scope, 'config-ref-volume', configMap, { name: 'config-ref' }), { readOnly: true });
      deployment.podMetadata.addAnnotation(CONFIG_REF_HASH_ANNOTATION, contentHash({ data: referenced.data ?? {}, binaryData: referenced.binaryData ?? {} }));
    }

    const service = new kplus.Service(scope, 'service', {
      metadata: { name },
      selector: kplus.Pods.select(scope, 'pods', { labels }),
      ports: [{ name: 'http', port: spec.port, targetPort: spec.port }],
    });

    if (spec.ingress !== undefined) {
      new kplus.Ingress(scope, 'ingress', {
        metadata: { name },
        className: spec.ingress.className,
        rules: [{
          host: spec.ingress.host,
          path: '/',
          pathType: kplus.HttpIngressPathType.PREFIX,
          backend: kplus.IngressBackend.fromService(service, { port: spec.port }),
        }],
      });
    }

    const url = spec.ingress !== undefined
      ? `http://${spec.ingress.host}/`
      : `http://${service.name}.${cr.metadata.namespace}.svc:${spec.port}/`;
    return { status: { url } };
  }
}

/** Kubernetes's own default: Always for `:latest` or an untagged image, IfNotPresent for a tag or digest (cdk8s-plus always says Always). */
function pullPolicy(image: string): kplus.ImagePullPolicy {
  if (image.includes('@')) return kplus.ImagePullPolicy.IF_NOT_PRESENT;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const tag = lastSegment.includes(':') ? lastSegment.slice(lastSegment.indexOf(':') + 1) : 'latest';
  return tag === 'latest' ? kplus.ImagePullPolicy.ALWAYS : kplus.ImagePullPolicy.IF_NOT_PRESENT;
}
