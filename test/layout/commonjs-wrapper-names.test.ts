/**
 * A consumer's ts-jest (the CommonJS project `cdk8s init` makes) compiles lib/'s TypeScript to CommonJS,
 * where a module's own exported consts are read as `exports.NAME` and dynamic imports become `require`
 * calls. A local variable or parameter named `exports` or `require` then shadows the CommonJS wrapper's:
 * a function that declares `const exports` and reads an exported const before that line throws
 * "Cannot access 'exports' before initialization" there, and only there (ESM, tsx and this repository's
 * jest never see it). So no declaration in lib/ takes either name.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));
const WRAPPER_NAMES = new Set(['exports', 'require']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `file:line name` of every variable, parameter, function or class declared with a wrapper name in `text`. */
function shadowingDeclarations(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    const declared =
      (ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isBindingElement(node) || ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node))
        && node.name && ts.isIdentifier(node.name) ? node.name : undefined;
    if (declared && WRAPPER_NAMES.has(declared.text)) {
      const { line } = source.getLineAndCharacterOfPosition(declared.getStart());
      found.push(`${relative(root, file)}:${line + 1} ${declared.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('GIVEN lib/ WHEN its declarations are read THEN none is named exports or require', () => {
  const files = sourceFiles(join(root, 'lib'));
  expect(files.length).toBeGreaterThan(50);
  expect(files.flatMap((file) => shadowingDeclarations(file, readFileSync(file, 'utf8')))).toEqual([]);
});

test('GIVEN a function declaring const exports and a parameter require WHEN read THEN both are found (the check can fail)', () => {
  const text = 'export const A = 1;\nexport function f(require: string) {\n  const exports = A;\n  return exports + require;\n}\n';
  expect(shadowingDeclarations(join(root, 'lib', 'example.ts'), text)).toEqual(['lib/example.ts:2 require', 'lib/example.ts:3 exports']);
});
