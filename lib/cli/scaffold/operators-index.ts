/**
 * `operators/index.ts` of a generated project, and how `create operator` registers one more operator in
 * it. Like kubebuilder's `// +kubebuilder:scaffold:*` comments, two marker lines say where: new imports go
 * right above {@link IMPORTS_MARKER}, new operators right above {@link OPERATORS_MARKER} (with its
 * indentation). Everything else in the file is the user's and is left as it is.
 */
import type { OperatorNaming } from './api-coordinates.js';
import { defaultImage, IMAGE_MODULE, OPERATORS_MODULE } from './project-templates.js';
import { ScaffoldError } from './scaffold-error.js';

/** The line above which `create operator` adds an operator's import. */
export const IMPORTS_MARKER = '// +cdk8s-operator:scaffold:imports';
/** The line above which `create operator` adds an operator to the array `addOperators` returns. */
export const OPERATORS_MARKER = '// +cdk8s-operator:scaffold:operators';

/** `operators/index.ts` with one operator registered. */
export function operatorsIndexTs(projectName: string, first: OperatorNaming): string {
  return `/**
 * Every operator of this project, added to \`scope\` by \`addOperators\`: main.ts synthesizes them
 * (\`npm run synth\`), the cdk8s-operator CLI loads them (\`--module ${OPERATORS_MODULE}\`: dev, render, run),
 * and the operator image runs them compiled to JavaScript (\`--module ${IMAGE_MODULE}\`, see the Dockerfile).
 *
 * \`npx cdk8s-operator create operator --kind <Kind>\` adds an operator at the two scaffold markers below.
 */
import type { Construct } from 'constructs';
import type { Operator, OperatorDeploymentProps } from 'cdk8s-operator-sdk';
${importLine(first)}
${IMPORTS_MARKER}

/** The image built from this project's Dockerfile; it runs every operator below. */
export const DEFAULT_IMAGE = '${defaultImage(projectName)}';

/** Settings read at the edge: main.ts takes them from the environment. */
export interface OperatorsOptions {
  /** The operator image the synthesized Deployments run. @default DEFAULT_IMAGE */
  readonly image?: string;
}

/** Adds one construct per operator to \`scope\` and returns them. */
export function addOperators(scope: Construct, options: OperatorsOptions = {}): Operator[] {
  // Each operator's Deployment runs \`cdk8s-operator run --module ${IMAGE_MODULE}\` in the image: this file,
  // compiled to JavaScript by the Dockerfile.
  const deployment: OperatorDeploymentProps = { image: options.image ?? DEFAULT_IMAGE, module: '${IMAGE_MODULE}' };
  return [
    ${constructLine(first)}
    ${OPERATORS_MARKER}
  ];
}
`;
}

/**
 * `source` (an operators/index.ts) with `op` imported and added to the array `addOperators` returns.
 * @throws ScaffoldError `MarkerMissing` naming the marker line that isn't there; `AlreadyExists` when
 *   the operator's class is already imported
 */
export function registerOperator(source: string, op: OperatorNaming, path: string): string {
  const lines = source.split('\n');
  if (lines.some((line) => line.includes(`{ ${op.className} }`))) {
    throw new ScaffoldError('AlreadyExists', `${path} already imports ${op.className}`);
  }
  const withImport = insertAbove(lines, IMPORTS_MARKER, importLine(op), path);
  return insertAbove(withImport, OPERATORS_MARKER, constructLine(op), path).join('\n');
}

function importLine(op: OperatorNaming): string {
  return `import { ${op.className} } from './${op.kebab}';`;
}

function constructLine(op: OperatorNaming): string {
  return `new ${op.className}(scope, { deployment }),`;
}

function insertAbove(lines: readonly string[], marker: string, line: string, path: string): string[] {
  const at = lines.findIndex((candidate) => candidate.trim() === marker);
  if (at < 0) {
    throw new ScaffoldError('MarkerMissing',
      `${path} has no line \`${marker}\`: put it back where new operators should go (see the file that \`cdk8s-operator init\` generates), or register the operator by hand`);
  }
  const indent = /^\s*/.exec(lines[at])![0];
  return [...lines.slice(0, at), indent + line, ...lines.slice(at)];
}
