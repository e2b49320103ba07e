import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// docs/concepts/render.md's "Write your first operator" must stay the code that test/cli/render.test.ts runs.
const root = fileURLToPath(new URL('../..', import.meta.url));

test('GIVEN the docs\' Echo example WHEN compared with the tested fixture THEN it is the same code', () => {
  const page = readFileSync(`${root}/docs/concepts/render.md`, 'utf8');
  const section = page.slice(page.indexOf('## Write your first operator'));
  const example = /```ts\n\/\/ echo-operator\.ts\n([\s\S]*?)```/.exec(section)?.[1];
  const fixture = readFileSync(`${root}/test/cli/fixtures/echo-operator.ts`, 'utf8').split('\n').slice(2).join('\n');
  expect(example).toBeDefined();
  expect(example).toBe(fixture);
});
