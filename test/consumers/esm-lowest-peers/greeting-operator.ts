import * as kplus from 'cdk8s-plus-28';
import type { Construct } from 'constructs';
import { z } from 'zod';
import { Operator, listMap, type CustomResource } from 'cdk8s-operator-sdk';

/** Greetings, one ConfigMap key per language. */
export const GreetingSpec = z.object({
  greetings: listMap(z.object({ language: z.string().min(2).max(8), text: z.string() }), ['language']),
});

export class GreetingOperator extends Operator<typeof GreetingSpec> {
  constructor(scope: Construct) {
    super(scope, 'greeting-operator', {
      group: 'greetings.example.com',
      version: 'v1alpha1',
      kind: 'Greeting',
      spec: GreetingSpec,
      deployment: { image: 'registry.example.com/greeting-operator:0.1.0', module: 'greeting-operator.ts' },
      examples: [{
        apiVersion: 'greetings.example.com/v1alpha1',
        kind: 'Greeting',
        metadata: { name: 'hello', namespace: 'default' },
        spec: { greetings: [{ language: 'en', text: 'hello' }] },
      }],
    });
  }

  render(cr: CustomResource<z.output<typeof GreetingSpec>>, scope: Construct): void {
    new kplus.ConfigMap(scope, 'greetings', {
      data: Object.fromEntries(cr.spec.greetings.map((greeting) => [greeting.language, greeting.text])),
    });
  }
}

/** For `cdk8s-operator render|run|dev --module greeting-operator.ts`. */
export function addOperators(scope: Construct): Operator[] {
  return [new GreetingOperator(scope)];
}
