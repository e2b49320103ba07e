/**
 * Every source file of the package opens with its module doc: a comment, before any import or code,
 * saying what the file is for (STYLE.md; issue 19 "module docs on every runtime file"). A `/** … *\/`
 * block or `//` lines both count (the entries and the generated table use `//`). Checked with the
 * TypeScript scanner, so a string or a template that looks like a comment does not count.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Whether `text` starts (after whitespace) with a comment of at least `minChars` characters of prose. */
function opensWithModuleDoc(text: string, minChars = 20): boolean {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, /* skipTrivia */ false, ts.LanguageVariant.Standard, text);
  let prose = '';
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.WhitespaceTrivia || token === ts.SyntaxKind.NewLineTrivia || token === ts.SyntaxKind.ShebangTrivia) continue;
    if (token !== ts.SyntaxKind.SingleLineCommentTrivia && token !== ts.SyntaxKind.MultiLineCommentTrivia) break;
    prose += scanner.getTokenText().replace(/^\/\*\*?|\*\/$|^\/\//g, '').replace(/^\s*\*/gm, '').trim();
  }
  return prose.length >= minChars;
}

const root = fileURLToPath(new URL('../..', import.meta.url));

function libFiles(): string[] {
  return readdirSync(`${root}/lib`, { recursive: true, encoding: 'utf8' })
    .map((entry) => posix.join('lib', entry.split('\\').join('/')))
    .filter((file) => /\.(c|m)?ts$/.test(file) && !file.endsWith('.d.ts'));
}

describe('module docs', () => {
  test('GIVEN every TypeScript file under lib/ WHEN its opening is read THEN it is a module doc, not an import or code', () => {
    const files = libFiles();
    expect(files.length).toBeGreaterThan(100);
    const missing = files.filter((file) => !opensWithModuleDoc(readFileSync(`${root}/${file}`, 'utf8')));
    expect(missing).toEqual([]);
  });

  test.each([
    { what: 'a module doc block', text: '/**\n * The workqueue of one controller.\n */\nimport x from "y";\n', expected: true },
    { what: 'line comments', text: '// The root entry: the construct side.\n// Re-exports only.\nexport {};\n', expected: true },
    { what: 'a shebang, then a doc', text: '#!/usr/bin/env node\n/** The CLI entry of cdk8s-operator. */\n', expected: true },
    { what: 'an import first', text: 'import x from "y";\n/** A doc that comes too late to be the module doc. */\n', expected: false },
    { what: 'a doc of a few characters', text: '/** x */\nexport {};\n', expected: false },
    { what: 'a string that looks like a comment', text: '"/** not a comment, only a string */";\n', expected: false },
    { what: 'nothing', text: '', expected: false },
  ])('GIVEN $what WHEN checked THEN it counts as a module doc: $expected', ({ text, expected }) => {
    expect(opensWithModuleDoc(text)).toBe(expected);
  });
});
