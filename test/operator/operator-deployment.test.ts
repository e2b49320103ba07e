import { App } from 'cdk8s';
import { VALIDATE_CHILDREN_MEMORY, operatorArgs } from '../../lib/operator/manifests/operator-deployment.js';
import { renderChildren } from '../../lib/operator/render/render-children.js';
import { TEST_DEPLOYMENT, WEB_SAMPLE, WebOperator } from './fixtures/test-operators.js';

type Json = Record<string, any>;

function deploymentOf(operator: WebOperator): Json {
  return operator.toJson().find((o: Json) => o.kind === 'Deployment');
}

describe('operator Deployment', () => {
  test('GIVEN default props WHEN synthesized THEN the pod meets the restricted Pod Security profile', () => {
    const deployment = deploymentOf(new WebOperator(new App()));
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;

    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsGroup: 65532,
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.volumeMounts).toEqual([{ mountPath: '/tmp', name: 'tmp' }]);
    expect(pod.volumes).toEqual([{ emptyDir: { sizeLimit: '64Mi' }, name: 'tmp' }]);
  });

  test('GIVEN default props WHEN synthesized THEN it mounts a token, sets requests and limits, probes and ports', () => {
    const deployment = deploymentOf(new WebOperator(new App()));
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;

    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.serviceAccountName).toBe('web-operator');
    expect(container.resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'probes' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'probes' });
    expect(container.ports).toEqual([
      { containerPort: 8443, name: 'metrics', protocol: 'TCP' },
      { containerPort: 8081, name: 'probes', protocol: 'TCP' },
    ]);
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.metadata).toMatchObject({ name: 'web-operator', namespace: 'web-operator-system' });
    expect(deployment.spec.selector.matchLabels).toEqual(deployment.spec.template.metadata.labels);
  });

  test('GIVEN replicas 3 with sharding THEN --sharding replaces --leader-elect and the leader-election Role may also delete leases; GIVEN 1 replica with sharding THEN a ring of one (--sharding)', () => {
    const sharded = new WebOperator(new App(), 'web-operator', { deployment: { replicas: 3, sharding: true, image: 'registry.example.com/op:1.0' } });
    const args = deploymentOf(sharded).spec.template.spec.containers[0].args;
    expect(args).toContain('--sharding');
    expect(args).not.toContain('--leader-elect');
    const role = sharded.toJson().find((o: Json) => o.kind === 'Role' && o.metadata.name === 'web-operator-leader-election');
    expect(role.rules).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'] }]);

    const elected = new WebOperator(new App(), 'web-operator', { deployment: { replicas: 3, image: 'registry.example.com/op:1.0' } });
    expect(elected.toJson().find((o: Json) => o.kind === 'Role' && o.metadata.name === 'web-operator-leader-election').rules[0].verbs).not.toContain('delete');
    // sharding asked with 1 replica is not dropped: the ring of one shards once the Deployment is scaled
    const one = new WebOperator(new App(), 'web-operator', { deployment: { replicas: 1, sharding: true, image: 'registry.example.com/op:1.0' } });
    expect(one.sharding).toBe(true);
    expect(deploymentOf(one).spec.template.spec.containers[0].args.filter((a: string) => a === '--sharding' || a === '--leader-elect')).toEqual(['--sharding']);
    expect(one.toJson().find((o: Json) => o.kind === 'Role' && o.metadata.name === 'web-operator-leader-election').rules[0].verbs).toContain('delete');
  });

  test('GIVEN one replica WHEN synthesized THEN args select the operator without leader election; GIVEN 3 THEN --leader-elect is added', () => {
    const single = deploymentOf(new WebOperator(new App())).spec.template.spec.containers[0];
    expect(single.args).toEqual(['run', '--module', 'operators.ts', '--operators', 'web-operator', '--metrics-bind-address=:8443', '--health-probe-bind-address=:8081']);

    const ha = deploymentOf(new WebOperator(new App(), 'web-operator', { deployment: { replicas: 3, image: 'registry.example.com/op:1.0' } }));
    expect(ha.spec.replicas).toBe(3);
    expect(ha.spec.template.spec.containers[0].args).toContain('--leader-elect');
    expect(ha.spec.template.spec.containers[0].image).toBe('registry.example.com/op:1.0');
  });

  test('GIVEN custom resources and namespace WHEN synthesized THEN they replace the defaults field by field', () => {
    const operator = new WebOperator(new App(), 'web-operator', {
      deployment: { namespace: 'ops', resources: { limits: { memory: '1Gi' } } },
    });
    const deployment = deploymentOf(operator);
    expect(deployment.metadata.namespace).toBe('ops');
    expect(deployment.spec.template.spec.containers[0].resources.limits).toEqual({ cpu: '500m', memory: '1Gi' });
    expect(operator.toJson().find((o: Json) => o.kind === 'Namespace').metadata.name).toBe('ops');
  });

  test('GIVEN watchNamespace WHEN args are built THEN --namespace is passed', () => {
    expect(operatorArgs('web-operator', 'operators.ts', { watchNamespace: 'team-a' })).toContain('--namespace=team-a');
  });

  test('GIVEN validateChildren and no memory set WHEN synthesized THEN the container gets the memory the validator needs (request 384Mi, limit 512Mi), the rest unchanged', () => {
    const deployment = deploymentOf(new WebOperator(new App(), 'web-operator', { deployment: { validateChildren: true } }));
    const [container] = deployment.spec.template.spec.containers;
    expect(container.args).toContain('--validate-children');
    expect(container.resources).toEqual({ requests: { cpu: '100m', memory: '384Mi' }, limits: { cpu: '500m', memory: '512Mi' } });
    expect(VALIDATE_CHILDREN_MEMORY).toEqual({ request: '384Mi', limit: '512Mi' });
  });

  test('GIVEN validateChildren WHEN the user sets a memory limit at or above 384Mi THEN it is kept; below it THEN synth refuses, naming the field, the value and the minimum', () => {
    const kept = (memory: string) => deploymentOf(new WebOperator(new App(), 'web-operator', { deployment: { validateChildren: true, resources: { limits: { memory } } } })).spec.template.spec.containers[0].resources.limits.memory;
    expect(kept('384Mi')).toBe('384Mi');
    expect(kept('1Gi')).toBe('1Gi');
    expect(kept('500M')).toBe('500M');
    for (const memory of ['256Mi', '383Mi', '300M', '0.25Gi']) {
      const operator = new WebOperator(new App(), 'web-operator', { deployment: { validateChildren: true, resources: { limits: { memory } } } });
      expect(() => operator.toJson()).toThrow(
        `[web-operator/Deployment] operator web-operator: deployment.resources.limits.memory is ${memory}, below the 384Mi that deployment.validateChildren needs (run --validate-children peaks at about 328 MiB at its first reconcile, and would be OOMKilled): raise the limit to at least 384Mi (leave it out for 512Mi), or turn validateChildren off`,
      );
    }
    // Without validateChildren the same limit is the user's choice.
    expect(deploymentOf(new WebOperator(new App(), 'web-operator', { deployment: { resources: { limits: { memory: '256Mi' } } } })).spec.template.spec.containers[0].resources.limits.memory).toBe('256Mi');
  });

  test('GIVEN validateChildren WHEN args are built THEN --validate-children is passed, and only then', () => {
    expect(operatorArgs('web-operator', 'operators.ts', { validateChildren: true })).toContain('--validate-children');
    expect(operatorArgs('web-operator', 'operators.ts', {})).not.toContain('--validate-children');
  });

  test("GIVEN image and module WHEN synthesized THEN the container runs the SDK's CLI from the user's project in /app, with NODE_ENV=production", () => {
    const container = deploymentOf(new WebOperator(new App())).spec.template.spec.containers[0];
    expect(container).toMatchObject({
      image: TEST_DEPLOYMENT.image,
      imagePullPolicy: 'IfNotPresent',
      workingDir: '/app',
      command: ['node', 'node_modules/cdk8s-operator-sdk/bin/cdk8s-operator.js'],
    });
    expect(container.env).toEqual([
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'NODE_ENV', value: 'production' },
    ]);
  });

  test('GIVEN a command, workingDir and compiled module WHEN synthesized THEN they replace the defaults', () => {
    const deployment = { image: 'op:1', module: 'dist/operators.js', workingDir: '/srv/op', command: ['node', 'cli.js'] };
    const container = deploymentOf(new WebOperator(new App(), 'web-operator', { deployment })).spec.template.spec.containers[0];
    expect(container).toMatchObject({ workingDir: '/srv/op', command: ['node', 'cli.js'] });
    expect(container.args.slice(0, 3)).toEqual(['run', '--module', 'dist/operators.js']);
  });

  test('GIVEN no deployment.image WHEN constructed and a CR rendered THEN both work; WHEN synthesized THEN the error names the operator and the prop', () => {
    const operator = new WebOperator(new App(), 'web-operator', { deployment: { image: undefined, module: undefined } });
    expect(renderChildren(operator, { ...WEB_SAMPLE, metadata: { ...WEB_SAMPLE.metadata, uid: 'u1' } }).map((m) => m.kind)).toContain('Deployment');

    // A construct validation, reported by synthesis before the Deployment is serialized.
    expect(() => operator.toJson()).toThrow(
      "[web-operator/Deployment] operator web-operator: deployment.image is required: the image that holds your operator's code (build it with the Dockerfile that `cdk8s-operator init` generates)",
    );
  });

  test('GIVEN an image without deployment.module WHEN synthesized THEN the error asks for the module relative to workingDir', () => {
    const operator = new WebOperator(new App(), 'web-operator', { deployment: { image: 'op:1', module: undefined } });
    expect(() => operator.toJson()).toThrow(/\[web-operator\/Deployment\] operator web-operator: deployment\.module is required with deployment\.image: the path, relative to deployment\.workingDir \(\/app\), of the module/);
  });

  test('GIVEN an empty command WHEN synthesized THEN it is rejected', () => {
    const operator = new WebOperator(new App(), 'web-operator', { deployment: { command: [] } });
    expect(() => operator.toJson()).toThrow(/deployment\.command must not be empty/);
  });
});
