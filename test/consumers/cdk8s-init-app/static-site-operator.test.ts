import { App } from 'cdk8s';
import { CustomResourceValidationError } from 'cdk8s-operator-sdk';
import { renderForSnapshot } from 'cdk8s-operator-sdk/testing';
import { StaticSiteOperator } from './static-site-operator';

const site = {
  apiVersion: 'sites.example.com/v1',
  kind: 'StaticSite',
  metadata: { name: 'hello', namespace: 'web' },
  spec: { message: 'hello, world' },
};

describe('StaticSiteOperator', () => {
  test('renders a Deployment and a Service', () => {
    const children = renderForSnapshot(new StaticSiteOperator(new App()), site);
    expect(children.map((child) => `${child.kind}/${child.metadata.name}`)).toEqual(['Deployment/hello-web', 'Service/hello-web-service']);
    expect(children).toMatchSnapshot();
  });

  test('rejects an invalid spec with the field path', () => {
    const invalid = { ...site, spec: { message: '', replicas: 9 } };
    expect(() => renderForSnapshot(new StaticSiteOperator(new App()), invalid)).toThrow(CustomResourceValidationError);
    expect(() => renderForSnapshot(new StaticSiteOperator(new App()), invalid)).toThrow(/spec\.message: .*\n?.*|spec\.replicas/);
  });
});
