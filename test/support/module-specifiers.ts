/**
 * The modules a TypeScript file names, read with the TypeScript compiler's own parser (no regex): what
 * test/layout/imports.test.ts checks the import boundaries with.
 */
import ts from 'typescript';

/** One module a file names. */
export interface ModuleSpecifier {
  /** As written, e.g. `../lib/index.js` or `cdk8s-operator-sdk/testing`. */
  readonly specifier: string;
  /** 1-based line of the statement or expression. */
  readonly line: number;
  /**
   * Erased at run time: `import type`, `export type … from`, an `import('…')` type, and an import whose
   * named bindings are all `type` (`import { type A } from 'a'`, elided by TypeScript without
   * `verbatimModuleSyntax`, which this repository does not set).
   */
  readonly typeOnly: boolean;
  /** Loaded only when the code runs: an `import('…')` or `require('…')` call (not a declaration). */
  readonly dynamic: boolean;
}

/**
 * Every module `text` names: `import` and `export … from` declarations (type-only ones too),
 * `import x = require('…')`, `import('…')` and `require('…')` calls with a string literal, and
 * `import('…')` types. Specifiers that are not string literals (a computed `import(url)`) are not
 * modules the file names and are left out.
 */
export function moduleSpecifiersOf(fileName: string, text: string): ModuleSpecifier[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: ModuleSpecifier[] = [];
  const add = (node: ts.Node, literal: ts.Node | undefined, typeOnly: boolean, dynamic = false) => {
    if (literal === undefined || !ts.isStringLiteralLike(literal)) return;
    found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, typeOnly, dynamic });
  };
  /** `import { type A, type B } from 'x'`: every binding a type, nothing else imported. */
  const onlyTypeBindings = (clause: ts.ImportClause | undefined): boolean =>
    clause !== undefined && clause.name === undefined && clause.namedBindings !== undefined && ts.isNamedImports(clause.namedBindings)
    && clause.namedBindings.elements.length > 0 && clause.namedBindings.elements.every((e) => e.isTypeOnly);
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.moduleSpecifier, (node.importClause?.isTypeOnly ?? false) || onlyTypeBindings(node.importClause));
    } else if (ts.isExportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node)) {
      const isImport = node.expression.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(node.expression) && node.expression.text === 'require';
      if (isImport || isRequire) add(node, node.arguments[0], false, true);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
