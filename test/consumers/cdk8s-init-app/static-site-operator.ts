import { Size } from 'cdk8s';
import { Construct } from 'constructs';
import * as kplus from 'cdk8s-plus-34';
import { z } from 'zod';
import { Operator, CustomResource } from 'cdk8s-operator-sdk';

/** A static web site: nginx serving a message. */
export const StaticSiteSpec = z.object({
  message: z.string().min(1).describe('Text the site serves.'),
  replicas: z.int().min(1).max(5).default(1),
});

export class StaticSiteOperator extends Operator<typeof StaticSiteSpec> {
  constructor(scope: Construct) {
    super(scope, 'static-site-operator', {
      group: 'sites.example.com',
      version: 'v1',
      kind: 'StaticSite',
      spec: StaticSiteSpec,
      deployment: { image: 'registry.example.com/static-site-operator:0.1.0', module: 'static-site-operator.ts' },
      examples: [{
        apiVersion: 'sites.example.com/v1',
        kind: 'StaticSite',
        metadata: { name: 'hello', namespace: 'default' },
        spec: { message: 'hello, world' },
      }],
    });
  }

  render(cr: CustomResource<z.output<typeof StaticSiteSpec>>, scope: Construct): void {
    const deployment = new kplus.Deployment(scope, 'web', {
      replicas: cr.spec.replicas,
      containers: [{
        image: 'hashicorp/http-echo:1.0',
        args: [`-text=${cr.spec.message}`, '-listen=:8080'],
        portNumber: 8080,
        resources: {
          cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(100) },
          memory: { request: Size.mebibytes(16), limit: Size.mebibytes(32) },
        },
      }],
    });
    deployment.exposeViaService({ ports: [{ port: 80, targetPort: 8080 }] });
  }
}

/** For `cdk8s-operator render|run|dev --module static-site-operator.ts`. */
export function addOperators(scope: Construct): Operator[] {
  return [new StaticSiteOperator(scope)];
}
