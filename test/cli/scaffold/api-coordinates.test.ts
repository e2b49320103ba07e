import { App } from 'cdk8s';
import { z } from 'zod';
import { groupProblem, kindProblem, operatorNaming, versionProblem } from '../../../lib/cli/scaffold/api-coordinates.js';
import { Operator } from '../../../lib/operator/operator.js';

class Probe extends Operator<z.ZodObject> {
  render(): void {}
}

/** Whether the Operator construct accepts these coordinates. */
function constructAccepts(kind: string, group: string, version: string): boolean {
  try {
    new Probe(new App(), 'probe', { kind, group, version, spec: z.object({}) });
    return true;
  } catch {
    return false;
  }
}

describe('api coordinates', () => {
  test.each(['WebApp', 'Memcached', 'HTTPRoute', 'V2', 'webApp', 'Web-App', '1App', '', 'Web App'])(
    'GIVEN kind %j WHEN checked THEN the CLI agrees with the Operator construct', (kind) => {
      expect(kindProblem(kind) === undefined).toBe(constructAccepts(kind, 'a.example.com', 'v1'));
    });

  test.each(['apps.example.com', 'a.b', 'example', 'Example.com', '-a.example.com', 'a_b.example.com', `${'a'.repeat(250)}.io`])(
    'GIVEN group %j WHEN checked THEN the CLI agrees with the Operator construct', (group) => {
      expect(groupProblem(group) === undefined).toBe(constructAccepts('Thing', group, 'v1'));
    });

  test.each(['v1', 'v12', 'v1alpha1', 'v2beta3', 'v0', '1', 'v1alpha', 'v1gamma1', 'V1'])(
    'GIVEN version %j WHEN checked THEN the CLI agrees with the Operator construct', (version) => {
      expect(versionProblem(version) === undefined).toBe(constructAccepts('Thing', 'a.example.com', version));
    });

  test('GIVEN a kind WHEN named THEN the generated names follow the construct\'s defaults', () => {
    expect(operatorNaming({ kind: 'HTTPRoute', group: 'net.example.com', version: 'v1' })).toEqual({
      kind: 'HTTPRoute', group: 'net.example.com', version: 'v1',
      kebab: 'http-route', className: 'HTTPRouteOperator', specName: 'HTTPRouteSpec', operatorName: 'http-route-operator',
      apiVersion: 'net.example.com/v1', plural: 'httproutes', sampleName: 'http-route-sample',
    });
    const operator = new Probe(new App(), 'probe', { kind: 'HTTPRoute', group: 'net.example.com', version: 'v1', spec: z.object({}) });
    expect(operator.operatorName).toBe('http-route-operator');
    expect(operator.crd.plural).toBe('httproutes');
  });
});
