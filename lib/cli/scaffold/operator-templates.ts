/**
 * The files of one operator in a generated project: `operators/<kebab>/index.ts` (spec and render),
 * `operators/<kebab>/sample.yaml` and `test/<kebab>.test.ts`. `init` writes them for its first operator,
 * `create operator` for every further one.
 *
 * The generated operator is a working placeholder, as kubebuilder's is: each CR becomes a small HTTP
 * server (a Deployment of hashicorp/http-echo answering `spec.message`) and a Service, hardened enough
 * for the Pod Security `restricted` profile. Users replace the spec and render with their own.
 */
import type { OperatorNaming } from './api-coordinates.js';
import type { ScaffoldFile } from './write-files.js';

/** The files of one operator: its construct, its sample and its test. */
export function operatorFiles(op: OperatorNaming): ScaffoldFile[] {
  return [
    { path: `operators/${op.kebab}/index.ts`, content: operatorTs(op) },
    { path: `operators/${op.kebab}/sample.yaml`, content: sampleYaml(op) },
    { path: `test/${op.kebab}.test.ts`, content: operatorTestTs(op) },
  ];
}

/** `operators/<kebab>/index.ts`: the operator construct. */
export function operatorTs(op: OperatorNaming): string {
  return `/**
 * The ${op.kind} operator: every \`${op.kind}\` custom resource (\`${op.apiVersion}\`) becomes a Deployment of
 * a small HTTP server that answers \`spec.message\`, and a Service in front of it.
 *
 * A starting point: change ${op.specName} and \`render\` to what a ${op.kind} should run. The CRD's schema,
 * the operator's RBAC (from the kinds \`render\` emits for sample.yaml) and its Deployment follow. After a
 * change, \`npm test\` shows how the render of sample.yaml moved (\`npx jest -u\` accepts it).
 */
import { join } from 'node:path';
import { Size, Yaml } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { Operator, selectorLabels, type CustomResource, type OperatorDeploymentProps } from 'cdk8s-operator-sdk';

/**
 * The spec of a ${op.kind}. This one schema is the TypeScript type of \`cr.spec\` (defaults applied), the
 * OpenAPI schema of the CRD (\`.describe()\` becomes the field's description), and the validation every CR
 * passes before \`render\` sees it.
 */
export const ${op.specName} = z.object({
  message: z.string().min(1).describe('What the server answers to every HTTP request.'),
  replicas: z.int().min(0).max(10).default(1).describe('Number of server pods (0..10).'),
});
export type ${op.specName} = z.output<typeof ${op.specName}>;

/** A tiny static HTTP server that answers with its \`-text\` argument. */
const SERVER_IMAGE = 'hashicorp/http-echo:1.0';
const SERVER_PORT = 5678;
/** cdk8s-plus sets runAsNonRoot, which needs a numeric uid; 65532 is the conventional "nonroot". */
const SERVER_UID = 65532;

/** Props of the {@link ${op.className}}. */
export interface ${op.className}Props {
  /**
   * The operator's own Deployment: the image that holds this project (see the Dockerfile) and the module
   * in it that exports \`addOperators\`. Only \`cdk8s synth\` needs it. @default none: set by operators/index.ts
   */
  readonly deployment?: OperatorDeploymentProps;
}

export class ${op.className} extends Operator<typeof ${op.specName}> {
  constructor(scope: Construct, props: ${op.className}Props = {}) {
    super(scope, '${op.operatorName}', {
      group: '${op.group}',
      version: '${op.version}',
      kind: '${op.kind}',
      spec: ${op.specName},
      // sample.yaml is read once, here: the tests render it, \`cdk8s-operator dev\` applies it and the
      // operator's RBAC covers the kinds its render emits. render() itself never touches the disk.
      examples: Yaml.load(join(__dirname, 'sample.yaml')),
      deployment: props.deployment,
    });
  }

  /**
   * The children of one ${op.kind}, added to \`scope\`. The SDK names them after the CR, puts them in its
   * namespace and owns them by it; the runtime applies what changed and prunes what is no longer
   * rendered. Keep it pure (no clock, network or randomness): same CR in, same children out.
   */
  render(cr: CustomResource<${op.specName}>, scope: Construct): void {
    // The labels of this ${op.kind}'s pods. cdk8s-plus would select them by a label of the construct
    // path, which a CR of the same name under another operator shares and a renamed construct changes.
    const labels = selectorLabels(cr, '${op.kebab}');
    const deployment = new kplus.Deployment(scope, 'server', {
      replicas: cr.spec.replicas, // cdk8s-plus would default to 2
      select: false, // by \`labels\` (below), not by the construct path
      podMetadata: { labels },
      securityContext: { user: SERVER_UID, group: SERVER_UID },
      containers: [{
        name: 'server',
        image: SERVER_IMAGE,
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT, // a pinned tag; cdk8s-plus would pull Always
        args: [\`-text=\${cr.spec.message}\`, \`-listen=:\${SERVER_PORT}\`],
        portNumber: SERVER_PORT,
        readiness: kplus.Probe.fromHttpGet('/', { port: SERVER_PORT }),
        // cdk8s-plus already runs it non-root, read-only, without privilege escalation; the Pod Security
        // "restricted" profile also wants no capabilities and the runtime's default seccomp profile
        securityContext: {
          user: SERVER_UID,
          group: SERVER_UID,
          capabilities: { drop: [kplus.Capability.ALL] },
          seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
        },
        resources: { // cdk8s-plus would request 1 CPU and 512Mi
          cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(100) },
          memory: { request: Size.mebibytes(16), limit: Size.mebibytes(32) },
        },
      }],
    });
    deployment.select(kplus.LabelSelector.of({ labels }));
    // \`labels\` again: exposeViaService() would select by the construct-path label
    new kplus.Service(scope, 'service', { selector: kplus.Pods.select(scope, 'pods', { labels }), ports: [{ port: 80, targetPort: SERVER_PORT }] });
  }
}
`;
}

/** `operators/<kebab>/sample.yaml`: one sample CR. */
export function sampleYaml(op: OperatorNaming): string {
  return `# A sample ${op.kind}: \`kubectl apply -f\` this file. It is also the operator's example (operators/${op.kebab}/index.ts):
# the tests render it, \`cdk8s-operator dev\` applies it, and the operator's RBAC derives from its render.
# Once the operator declares \`related\` objects (a ConfigMap the ${op.kind} references), put them here too,
# as documents before the ${op.kind}: dev applies them first, and synth and the tests render against them.
apiVersion: ${op.apiVersion}
kind: ${op.kind}
metadata:
  name: ${op.sampleName}
spec:
  message: hello from ${op.sampleName}
  replicas: 1
`;
}

/** `test/<kebab>.test.ts`: a snapshot of the sample's render, and a CR the spec rejects. */
export function operatorTestTs(op: OperatorNaming): string {
  return `import { App } from 'cdk8s';
import { CustomResourceValidationError } from 'cdk8s-operator-sdk';
import { renderForSnapshot } from 'cdk8s-operator-sdk/testing';
import { ${op.className} } from '../operators/${op.kebab}';

describe('${op.className}', () => {
  const operator = new ${op.className}(new App());

  test('GIVEN each sample WHEN rendered THEN its children match the snapshot', () => {
    expect(operator.examples.length).toBeGreaterThan(0);
    for (const sample of operator.examples) {
      // renderForSnapshot gives the CR a fixed uid, so ownerReferences are the same on every run
      expect(renderForSnapshot(operator, sample)).toMatchSnapshot(sample.metadata.name);
    }
  });

  test('GIVEN a ${op.kind} without a message WHEN rendered THEN validation rejects it, naming the field', () => {
    const cr = { apiVersion: '${op.apiVersion}', kind: '${op.kind}', metadata: { name: 'invalid' }, spec: { replicas: 1 } };

    expect(() => renderForSnapshot(operator, cr)).toThrow(CustomResourceValidationError);
    expect(() => renderForSnapshot(operator, cr)).toThrow(/spec\\.message/);
  });
});
`;
}
