/**
 * What `init` and `create operator` are told about an operator: its kind, API group and version, and the
 * project name. Each flag is checked with the rule the Operator construct applies to the same prop
 * (lib/operator/operator.ts, lib/operator/schema/names.ts), so a project that scaffolds also synthesizes;
 * test/cli/scaffold/api-coordinates.test.ts holds the two to the same answers.
 */
import { apiGroupProblem, apiVersionProblem, dns1123LabelProblem, kindNameProblem } from '../../operator/schema/names.js';
import { kebabCase, pluralize } from '../../operator/operator.js';
import { ScaffoldError } from './scaffold-error.js';

/**
 * The API version `init` and `create operator` use when `--version` isn't given: a new API starts at alpha
 * (https://kubernetes.io/docs/reference/using-api/#api-versioning).
 */
export const DEFAULT_API_VERSION = 'v1alpha1';

/** The kind an operator reconciles: `group/version`, `kind`. */
export interface ApiCoordinates {
  /** CamelCase kind, e.g. `WebApp`. */
  readonly kind: string;
  /** API group, a DNS subdomain with at least one dot, e.g. `apps.example.com`. */
  readonly group: string;
  /** API version, e.g. `v1alpha1`. */
  readonly version: string;
}

/** The names generated code uses for one operator, all derived from its kind. */
export interface OperatorNaming extends ApiCoordinates {
  /** kebab-case kind: folder `operators/<kebab>/`, test `test/<kebab>.test.ts`. E.g. `web-app`. */
  readonly kebab: string;
  /** The operator class, e.g. `WebAppOperator`. */
  readonly className: string;
  /** The spec schema constant and type, e.g. `WebAppSpec`. */
  readonly specName: string;
  /** The Operator construct's default name (`kebab-case(kind)-operator`), e.g. `web-app-operator`. */
  readonly operatorName: string;
  /** `group/version`. */
  readonly apiVersion: string;
  /** The CRD's plural, e.g. `webapps`. */
  readonly plural: string;
  /** The name of the sample CR in `operators/<kebab>/sample.yaml`, e.g. `web-app-sample`. */
  readonly sampleName: string;
}

/**
 * The longest operator name that still fits the namespace the operator runs in, `<name>-system`, in a
 * DNS-1123 label (63 characters).
 */
const MAX_OPERATOR_NAME = 63 - '-system'.length;

/** Why `kind` can't be an operator's kind, or undefined. */
export function kindProblem(kind: string): string | undefined {
  const problem = kindNameProblem(kind);
  if (problem !== undefined) return problem;
  const operatorName = `${kebabCase(kind)}-operator`;
  if (operatorName.length > MAX_OPERATOR_NAME) {
    return `is too long: the operator's name ${operatorName} and its namespace ${operatorName}-system must fit in 63 characters`;
  }
  return undefined;
}

/** Why `group` can't be an API group, or undefined (the Operator construct's rule). */
export const groupProblem = apiGroupProblem;

/** Why `version` can't be an API version, or undefined (the Operator construct's rule). */
export const versionProblem = apiVersionProblem;

/**
 * Why `name` can't name a project, or undefined. The name is the npm package name, the image name and
 * the first label of the default API group, so it must be a DNS-1123 label (which npm also accepts).
 */
export function projectNameProblem(name: string): string | undefined {
  const problem = dns1123LabelProblem(name);
  if (problem === undefined) return undefined;
  return `${problem} (it names the npm package, the image and the default API group)`;
}

/**
 * Checks the coordinates and derives the generated names.
 * @throws ScaffoldError `InvalidFlag` naming the flag (`--kind`, `--group`, `--version`) and the rule
 */
export function operatorNaming(coordinates: ApiCoordinates): OperatorNaming {
  checkFlag('--kind', coordinates.kind, kindProblem);
  checkFlag('--group', coordinates.group, groupProblem);
  checkFlag('--version', coordinates.version, versionProblem);
  const kebab = kebabCase(coordinates.kind);
  return {
    ...coordinates,
    kebab,
    className: `${coordinates.kind}Operator`,
    specName: `${coordinates.kind}Spec`,
    operatorName: `${kebab}-operator`,
    apiVersion: `${coordinates.group}/${coordinates.version}`,
    plural: pluralize(coordinates.kind.toLowerCase()),
    sampleName: `${kebab}-sample`,
  };
}

/**
 * @throws ScaffoldError `InvalidFlag`: `--<flag> "<value>" <problem>`
 */
export function checkFlag(flag: string, value: string, problemOf: (value: string) => string | undefined): void {
  const problem = problemOf(value);
  if (problem !== undefined) throw new ScaffoldError('InvalidFlag', `${flag} ${JSON.stringify(value)} ${problem}`);
}
