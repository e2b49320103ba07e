import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { Operator, dependsOn, selectorLabels, type CustomResource, type RenderContext } from 'cdk8s-operator-sdk';
import { contentHash } from '../app/config-hash.js';
import { EXAMPLE_DEPLOYMENT } from '../example-deployment.js';
import { loadSamples } from '../load-samples.js';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../pod-security.js';
import { DEV_CREDENTIALS_KEY, derivePassword } from './credentials.js';

/** A Kubernetes quantity with an optional binary or decimal SI suffix, e.g. 512Mi, 10Gi, 1.5T. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;
/** Five cron fields (minute hour day-of-month month day-of-week), as a CronJob's schedule takes them. */
const CRON = /^[0-9*,/?-]+( [0-9A-Za-z*,/?-]+){4}$/;

export const POSTGRES_VERSIONS = ['15', '16'] as const;

/** A PostgreSQL database. */
export const DatabaseSpec = z.object({
  version: z.enum(POSTGRES_VERSIONS).describe('PostgreSQL major version, as a string: "15" or "16".'),
  storageSize: z.string().regex(QUANTITY).describe('Size of each replica\'s data volume, e.g. 10Gi.'),
  replicas: z.int().min(1).max(5).default(1).describe('Pods, each with its own data volume (1..5).'),
  backup: z.object({
    schedule: z.string().regex(CRON).describe('Cron schedule, five fields, e.g. "30 2 * * *".'),
    storageSize: z.string().regex(QUANTITY).default('10Gi').describe('Size of the volume the dumps are written to.'),
  }).optional().describe('Dump all databases on a schedule; no backups when left out.'),
  migration: z.object({
    image: z.string().min(1).describe('Image that runs the migrations, e.g. ghcr.io/example/orders-migrate:2.3.0.'),
    args: z.array(z.string()).default([]).describe('Arguments of the image\'s entrypoint.'),
  }).optional().describe('A Job run once the database is ready, and again (a new Job) whenever this changes. Its pod gets PGHOST, PGPORT, PGUSER and PGPASSWORD.'),
});
export type DatabaseSpec = z.output<typeof DatabaseSpec>;

/** What a Database reports. */
export const DatabaseStatus = z.object({
  endpoint: z.string().describe('host:port clients connect to (the primary pod\'s stable DNS name).'),
  readyReplicas: z.int().min(0).describe('Pods of the StatefulSet that are ready.'),
});

/** The official postgres alpine images run as the `postgres` user, uid/gid 70. */
export const POSTGRES_UID = 70;
export const POSTGRES_PORT = 5432;
export const POSTGRES_USER = 'postgres';
const DATA_DIR = '/var/lib/postgresql/data';
const BACKUP_DIR = '/backup';
/** Dumps older than this many days are deleted by the backup job. */
const BACKUP_RETENTION_DAYS = 7;

export interface DatabaseOperatorProps {
  /**
   * Secret key the database passwords are derived from (see {@link derivePassword}). Read it at the edge,
   * e.g. from a file mounted from a Secret into the operator's pod, never inside render().
   * @default DEV_CREDENTIALS_KEY, a published key for render, tests and local clusters only
   */
  readonly credentialsKey?: string;
}

/**
 * A `databases.example.com/v1alpha1` Database becomes a StatefulSet of PostgreSQL with one volume per
 * pod (volumeClaimTemplates), a headless Service, a credentials Secret and a PodDisruptionBudget, plus a
 * backup CronJob and the volume it writes to when `spec.backup` is set.
 *
 * cdk8s-plus-28 has neither volumeClaimTemplates nor a PodDisruptionBudget, so this operator uses the
 * generated `k8s.*` classes throughout; every field it sets is spelled out.
 *
 * The Secret's password is HMAC-SHA256(credentialsKey, metadata.uid): the same on every reconcile while
 * render() stays pure (no randomness, no read of the live Secret).
 */
export class DatabaseOperator extends Operator<typeof DatabaseSpec, typeof DatabaseStatus> {
  private readonly credentialsKey: string;

  constructor(scope: Construct, id = 'database-operator', props: DatabaseOperatorProps = {}) {
    super(scope, id, {
      group: 'databases.example.com',
      version: 'v1alpha1',
      kind: 'Database',
      shortNames: ['db'],
      spec: DatabaseSpec,
      status: DatabaseStatus,
      // The samples have no migration, so the Job kind is not among the kinds rendered for them.
      owns: [{ apiVersion: 'batch/v1', kind: 'Job' }],
      printerColumns: [
        { name: 'Version', type: 'string', jsonPath: '.spec.version' },
        { name: 'Storage', type: 'string', jsonPath: '.spec.storageSize' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Endpoint', type: 'string', jsonPath: '.status.endpoint', priority: 1 },
      ],
      examples: loadSamples<z.input<typeof DatabaseSpec>>(new URL('./sample.yaml', import.meta.url)),
      deployment: EXAMPLE_DEPLOYMENT,
    });
    this.credentialsKey = props.credentialsKey ?? DEV_CREDENTIALS_KEY;
  }

  render(cr: CustomResource<DatabaseSpec>, scope: Construct): void {
    const { name, uid } = cr.metadata;
    const { spec } = cr;
    if (uid === undefined || uid === '') {
      throw new Error(`Database ${name}: metadata.uid is required to derive the credentials`);
    }
    const labels = selectorLabels(cr, 'postgres');
    const image = `postgres:${spec.version}-alpine`;
    const secretName = `${name}-credentials`;
    const fromSecret = (envName: string, key: string): k8s.EnvVar =>
      ({ name: envName, valueFrom: { secretKeyRef: { name: secretName, key } } });

    // `data`, not `stringData`: the API server turns stringData into data, so a stringData Secret would
    // never match the live object and would be applied on every reconcile.
    new k8s.KubeSecret(scope, 'credentials', {
      metadata: { name: secretName },
      type: 'Opaque',
      data: base64Values({
        username: POSTGRES_USER,
        password: derivePassword(this.credentialsKey, uid),
        host: name,
        port: String(POSTGRES_PORT),
      }),
    });

    new k8s.KubeService(scope, 'service', {
      metadata: { name },
      spec: {
        clusterIp: 'None', // headless: per-pod DNS names <name>-<ordinal>.<name>
        selector: labels,
        ports: [{ name: 'postgres', port: POSTGRES_PORT, targetPort: k8s.IntOrString.fromNumber(POSTGRES_PORT) }],
      },
    });

    const statefulSet = new k8s.KubeStatefulSet(scope, 'statefulset', {
      metadata: { name },
      spec: {
        serviceName: name,
        replicas: spec.replicas,
        selector: { matchLabels: labels },
        // The volumes live as long as the Database: deleting the CR deletes its data, so a password
        // derived from the CR's uid always belongs to the data it protects.
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            securityContext: { ...restrictedPodSecurityContext(POSTGRES_UID), fsGroupChangePolicy: 'OnRootMismatch' },
            containers: [{
              name: 'postgres',
              image,
              imagePullPolicy: 'IfNotPresent',
              ports: [{ name: 'postgres', containerPort: POSTGRES_PORT }],
              env: [
                fromSecret('POSTGRES_USER', 'username'),
                fromSecret('POSTGRES_PASSWORD', 'password'),
                { name: 'PGDATA', value: `${DATA_DIR}/pgdata` }, // the volume's root may hold lost+found
              ],
              readinessProbe: { exec: { command: ['pg_isready', '-U', POSTGRES_USER, '-h', '127.0.0.1'] }, periodSeconds: 10 },
              livenessProbe: { tcpSocket: { port: k8s.IntOrString.fromNumber(POSTGRES_PORT) }, initialDelaySeconds: 30, periodSeconds: 10 },
              resources: {
                requests: { cpu: k8s.Quantity.fromString('250m'), memory: k8s.Quantity.fromString('256Mi') },
                limits: { cpu: k8s.Quantity.fromString('1'), memory: k8s.Quantity.fromString('1Gi') },
              },
              securityContext: restrictedContainerSecurityContext(POSTGRES_UID),
              volumeMounts: [
                { name: 'data', mountPath: DATA_DIR },
                { name: 'run', mountPath: '/var/run/postgresql' }, // socket and lock file; the root is read-only
                { name: 'tmp', mountPath: '/tmp' },
              ],
            }],
            volumes: [
              { name: 'run', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
        volumeClaimTemplates: [{
          metadata: { name: 'data', labels },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: k8s.Quantity.fromString(spec.storageSize) } },
          },
        }],
      },
    });

    // maxUnavailable rather than minAvailable: with one replica, minAvailable 1 would block every drain.
    new k8s.KubePodDisruptionBudget(scope, 'pdb', {
      metadata: { name },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: labels } },
    });

    if (spec.migration !== undefined) {
      // A Job's pod template is immutable: a changed migration is a new Job (the old one is pruned).
      const migration = spec.migration;
      const job = new k8s.KubeJob(scope, 'migrate', {
        metadata: { name: `${name}-migrate-${contentHash(migration).slice(0, 8)}` },
        spec: {
          backoffLimit: 3,
          template: {
            metadata: { labels: selectorLabels(cr, 'postgres-migrate') },
            spec: {
              restartPolicy: 'OnFailure',
              automountServiceAccountToken: false,
              securityContext: restrictedPodSecurityContext(POSTGRES_UID),
              containers: [{
                name: 'migrate',
                image: migration.image,
                imagePullPolicy: 'IfNotPresent',
                args: migration.args,
                env: [
                  { name: 'PGHOST', value: `${name}-0.${name}` },
                  { name: 'PGPORT', value: String(POSTGRES_PORT) },
                  fromSecret('PGUSER', 'username'),
                  fromSecret('PGPASSWORD', 'password'),
                ],
                resources: {
                  requests: { cpu: k8s.Quantity.fromString('50m'), memory: k8s.Quantity.fromString('64Mi') },
                  limits: { cpu: k8s.Quantity.fromString('500m'), memory: k8s.Quantity.fromString('256Mi') },
                },
                securityContext: restrictedContainerSecurityContext(POSTGRES_UID),
              }],
            },
          },
        },
      });
      // Created only once the StatefulSet is ready (all replicas ready, current generation).
      dependsOn(job, statefulSet);
    }

    if (spec.backup === undefined) return;

    const backupClaim = `${name}-backup`;
    new k8s.KubePersistentVolumeClaim(scope, 'backup-volume', {
      metadata: { name: backupClaim },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: k8s.Quantity.fromString(spec.backup.storageSize) } },
      },
    });

    // The timestamp in the file name is taken by the job's shell when it runs, not by render().
    const script = [
      'set -o pipefail',
      `pg_dumpall -h ${name}-0.${name} -U ${POSTGRES_USER} | gzip > ${BACKUP_DIR}/${name}-$(date -u +%Y%m%dT%H%M%SZ).sql.gz`,
      `find ${BACKUP_DIR} -name '${name}-*.sql.gz' -mtime +${BACKUP_RETENTION_DAYS} -delete`,
    ].join('\n');
    new k8s.KubeCronJob(scope, 'backup', {
      metadata: { name: `${name}-backup` },
      spec: {
        schedule: spec.backup.schedule,
        concurrencyPolicy: 'Forbid',
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 3,
        jobTemplate: {
          spec: {
            backoffLimit: 2,
            template: {
              metadata: { labels: selectorLabels(cr, 'postgres-backup') },
              spec: {
                restartPolicy: 'OnFailure',
                automountServiceAccountToken: false,
                securityContext: { ...restrictedPodSecurityContext(POSTGRES_UID), fsGroupChangePolicy: 'OnRootMismatch' },
                containers: [{
                  name: 'backup',
                  image,
                  imagePullPolicy: 'IfNotPresent',
                  command: ['/bin/sh', '-ec', script],
                  env: [fromSecret('PGPASSWORD', 'password')],
                  resources: {
                    requests: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('128Mi') },
                    limits: { cpu: k8s.Quantity.fromString('500m'), memory: k8s.Quantity.fromString('512Mi') },
                  },
                  securityContext: restrictedContainerSecurityContext(POSTGRES_UID),
                  volumeMounts: [{ name: 'backup', mountPath: BACKUP_DIR }, { name: 'tmp', mountPath: '/tmp' }],
                }],
                volumes: [
                  { name: 'backup', persistentVolumeClaim: { claimName: backupClaim } },
                  { name: 'tmp', emptyDir: {} },
                ],
              },
            },
          },
        },
      },
    });
  }

  /**
   * `status.endpoint` and `status.readyReplicas` (of the StatefulSet as it exists), apart from render:
   * a change of the StatefulSet's status does not render the children again.
   */
  override status(cr: CustomResource<DatabaseSpec>, context: RenderContext): z.input<typeof DatabaseStatus> {
    const { name, namespace } = cr.metadata;
    const statefulSet = context.observed.get({ apiVersion: 'apps/v1', kind: 'StatefulSet' }, name);
    return {
      endpoint: `${name}-0.${name}.${namespace}.svc:${POSTGRES_PORT}`,
      readyReplicas: statefulSet?.status?.readyReplicas ?? 0,
    };
  }
}

function base64Values(values: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));
}
