import { App } from 'cdk8s';
import { CustomResourceValidationError, type Manifest } from 'cdk8s-operator-sdk';
import { renderExamplesForSnapshot, renderForSnapshot } from 'cdk8s-operator-sdk/testing';
import { DEV_CREDENTIALS_KEY, derivePassword } from '../../operators/database/credentials.js';
import { DatabaseOperator, POSTGRES_UID } from '../../operators/database/index.js';
import { find, kinds } from '../support/manifests.js';

const operator = new DatabaseOperator(new App());

function database(spec: Record<string, unknown>, uid?: string, name = 'orders') {
  return { apiVersion: 'databases.example.com/v1alpha1', kind: 'Database', metadata: { name, namespace: 'shop', ...(uid ? { uid } : {}) }, spec };
}

function password(manifests: Manifest[]): string {
  return Buffer.from(find(manifests, 'Secret').data.password, 'base64').toString('utf8');
}

const minimal = { version: '16', storageSize: '5Gi' };

describe('DatabaseOperator', () => {
  test('GIVEN the sample WHEN its children are rendered THEN they match the snapshot', () => {
    expect(renderExamplesForSnapshot(operator)).toMatchSnapshot();
  });

  test('GIVEN no backup WHEN rendered THEN a StatefulSet, headless Service, Secret and PDB, and no CronJob', () => {
    const children = renderForSnapshot(operator, database(minimal));
    expect(kinds(children)).toEqual(['PodDisruptionBudget', 'Secret', 'Service', 'StatefulSet']);
    const statefulSet = find(children, 'StatefulSet');
    expect(statefulSet.spec).toMatchObject({ serviceName: 'orders', replicas: 1 });
    expect(statefulSet.spec.template.spec.containers[0].image).toBe('postgres:16-alpine');
    expect(statefulSet.spec.volumeClaimTemplates).toEqual([expect.objectContaining({
      metadata: expect.objectContaining({ name: 'data' }),
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } },
    })]);
    expect(find(children, 'Service').spec.clusterIP).toBe('None');
    expect(find(children, 'PodDisruptionBudget').spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: statefulSet.spec.selector.matchLabels } });
  });

  test('GIVEN a backup schedule WHEN rendered THEN a CronJob on that schedule writes to its own volume', () => {
    const children = renderForSnapshot(operator, database({ ...minimal, version: '15', backup: { schedule: '0 3 * * 0' } }));
    expect(kinds(children)).toEqual(['CronJob', 'PersistentVolumeClaim', 'PodDisruptionBudget', 'Secret', 'Service', 'StatefulSet']);
    const cronJob = find(children, 'CronJob');
    expect(cronJob.spec).toMatchObject({ schedule: '0 3 * * 0', concurrencyPolicy: 'Forbid' });
    const pod = cronJob.spec.jobTemplate.spec.template.spec;
    expect(pod.containers[0].image).toBe('postgres:15-alpine');
    expect(pod.volumes).toContainEqual({ name: 'backup', persistentVolumeClaim: { claimName: 'orders-backup' } });
    expect(find(children, 'PersistentVolumeClaim').spec.resources.requests.storage).toBe('10Gi');
  });

  test('GIVEN one CR WHEN rendered twice THEN the password is the same, and the Secret uses data (not stringData)', () => {
    const first = renderForSnapshot(operator, database(minimal, 'uid-1'));
    const second = renderForSnapshot(operator, database(minimal, 'uid-1'));
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(password(first)).toBe(derivePassword(DEV_CREDENTIALS_KEY, 'uid-1'));
    expect(password(first)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(find(first, 'Secret').stringData).toBeUndefined();
  });

  test('GIVEN another uid or another key WHEN rendered THEN the password differs', () => {
    const base = password(renderForSnapshot(operator, database(minimal, 'uid-1')));
    expect(password(renderForSnapshot(operator, database(minimal, 'uid-2')))).not.toBe(base);
    const otherKey = new DatabaseOperator(new App(), 'database-operator', { credentialsKey: 'a-real-key' });
    expect(password(renderForSnapshot(otherKey, database(minimal, 'uid-1')))).not.toBe(base);
  });

  test('GIVEN a CR WHEN rendered THEN the containers read the password from the Secret, never inline', () => {
    const children = renderForSnapshot(operator, database({ ...minimal, backup: { schedule: '0 3 * * *' } }, 'uid-1'));
    const secret = password(children);
    expect(JSON.stringify(children.filter((m) => m.kind !== 'Secret'))).not.toContain(secret);
    const env = find(children, 'StatefulSet').spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { key: 'password', name: 'orders-credentials' } } });
  });

  test('GIVEN the pods WHEN rendered THEN they run as the postgres uid under the restricted profile', () => {
    const children = renderForSnapshot(operator, database({ ...minimal, backup: { schedule: '0 3 * * *' } }));
    const pods = [find(children, 'StatefulSet').spec.template.spec, find(children, 'CronJob').spec.jobTemplate.spec.template.spec];
    for (const pod of pods) {
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: POSTGRES_UID, fsGroup: POSTGRES_UID });
      expect(pod.containers[0].securityContext).toMatchObject({
        runAsNonRoot: true, runAsUser: POSTGRES_UID, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.containers[0].resources.limits).toBeDefined();
      expect(pod.containers[0].resources.requests).toBeDefined();
    }
  });

  test.each([
    [{ storageSize: '5Gi' }, ['spec.version']],
    [{ version: 16, storageSize: '5Gi' }, ['spec.version']],
    [{ version: '14', storageSize: '5Gi' }, ['spec.version']],
    [{ version: '16', storageSize: 'five' }, ['spec.storageSize']],
    [{ version: '16', storageSize: '5Gi', replicas: 0 }, ['spec.replicas']],
    [{ version: '16', storageSize: '5Gi', backup: { schedule: 'daily' } }, ['spec.backup.schedule']],
    [{ version: '16', storageSize: '5Gi', backup: { schedule: '0 3 * * *', storageSize: '1 Gi' } }, ['spec.backup.storageSize']],
  ])('GIVEN spec %j WHEN validated THEN %j is reported', (spec, paths) => {
    let error: unknown;
    try {
      operator.parseCustomResource(database(spec));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CustomResourceValidationError);
    expect((error as CustomResourceValidationError).fields.map((f) => f.path)).toEqual(paths);
  });
});
