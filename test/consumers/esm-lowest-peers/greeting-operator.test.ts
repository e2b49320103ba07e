import { App } from 'cdk8s';
import { CustomResourceValidationError } from 'cdk8s-operator-sdk';
import { renderForSnapshot, synthForSnapshot } from 'cdk8s-operator-sdk/testing';
import { GreetingOperator } from './greeting-operator.js';

const greeting = {
  apiVersion: 'greetings.example.com/v1alpha1',
  kind: 'Greeting',
  metadata: { name: 'hello', namespace: 'team-a' },
  spec: { greetings: [{ language: 'en', text: 'hello' }, { language: 'fr', text: 'bonjour' }] },
};

test('renders one ConfigMap with a key per language', () => {
  const children = renderForSnapshot(new GreetingOperator(new App()), greeting);
  expect(children).toHaveLength(1);
  expect(children[0].data).toEqual({ en: 'hello', fr: 'bonjour' });
  expect(children).toMatchSnapshot();
});

test('rejects duplicate list-map keys with the field path', () => {
  const twice = { ...greeting, spec: { greetings: [{ language: 'en', text: 'a' }, { language: 'en', text: 'b' }] } };
  expect(() => renderForSnapshot(new GreetingOperator(new App()), twice)).toThrow(CustomResourceValidationError);
  expect(() => renderForSnapshot(new GreetingOperator(new App()), twice)).toThrow(/spec\.greetings\[1\]/);
});

test('synthesizes the CRD with the list-map keys', () => {
  const crd = synthForSnapshot(new GreetingOperator(new App())).find((o) => (o as { kind: string }).kind === 'CustomResourceDefinition') as any;
  const greetings = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.greetings;
  expect(greetings['x-kubernetes-list-type']).toBe('map');
  expect(greetings['x-kubernetes-list-map-keys']).toEqual(['language']);
});
