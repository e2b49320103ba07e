import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// README.md's "Write your first operator" must stay the code that test/cli/render.test.ts runs.
const root = fileURLToPath(new URL('../..', import.meta.url));

test('GIVEN the README example WHEN compared with the tested fixture THEN it is the same code', () => {
  const readme = readFileSync(`${root}/README.md`, 'utf8');
  const section = readme.slice(readme.indexOf('## Write your first operator'));
  const example = /```ts\n\/\/ echo-operator\.ts\n([\s\S]*?)```/.exec(section)?.[1];
  const fixture = readFileSync(`${root}/test/cli/fixtures/echo-operator.ts`, 'utf8').split('\n').slice(2).join('\n');
  expect(example).toBeDefined();
  expect(example).toBe(fixture);
});
