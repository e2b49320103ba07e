/**
 * `cdk8s-operator package olm`: one operator as an OLM bundle (registry+v1), checked by Operator
 * Framework's own validators.
 *
 * ```
 * cdk8s-operator package olm --out DIR [--module PATH] [--operator NAME] [--package NAME] [--version X.Y.Z]
 *   [--channels alpha[,stable]] [--default-channel NAME] [--display-name TEXT] [--description TEXT]
 *   [--provider NAME] [--maintainer "Name <email>"]… [--link name=url]… [--keywords a,b]
 *   [--min-kube-version X.Y.Z] [--replaces CSV] [--require-validation]
 * ```
 *
 * - Loads the operators (`--module`, as `render` and `run` do), picks `--operator` (required when the
 *   module has several), synthesizes its objects and maps them to a ClusterServiceVersion and the
 *   manifests beside it (lib/package/olm/cluster-service-version.ts), written to DIR/manifests, with
 *   DIR/metadata/annotations.yaml and DIR/bundle.Dockerfile (lib/package/olm/bundle-files.ts).
 * - The CSV's descriptive fields default from the `package.json` of the working directory: `version`,
 *   `description`, `author` (provider and maintainer, `Name <email>`), `homepage` and `repository`
 *   (links), `keywords`; a flag wins over it. The package name defaults to the operator's name.
 * - An operator's webhooks become the CSV's webhookdefinitions: OLM issues their certificate, mounts it
 *   at `/tmp/k8s-webhook-server/serving-certs` and injects its CA, and the bundle's Deployment runs `run
 *   --webhook-cert-dir` on that directory (see lib/package/olm/cluster-service-version.ts).
 * - Then runs the validators (lib/package/olm/olm-validator.ts) over DIR: each error is printed as
 *   `error: <validator>: <its message>` and fails the command; warnings are printed as `warning: …`.
 *   When the validator program is not found the bundle is written, a `warning: bundle NOT validated …`
 *   line says where it was looked for and how to build it, and the command succeeds, unless
 *   `--require-validation` makes that an error.
 *
 * Exit codes: 0 written (and valid, or not validated without `--require-validation`); 2 the validators
 * refused the bundle (it stays in DIR to inspect); 1 anything else (operators not loadable, unknown
 * operator, synthesis failure, an object a bundle cannot carry, validator missing with
 * `--require-validation` or failing to run).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import type { IConstruct } from 'constructs';
import type { Operator } from '../operator/operator.js';
import { packageRoot } from '../package-root.js';
import { buildOlmBundle, type CsvMetadata, type Manifest } from '../package/olm/cluster-service-version.js';
import { writeOlmBundle } from '../package/olm/bundle-files.js';
import { locateOlmValidator, reportErrors, reportWarnings, runOlmValidator } from '../package/olm/olm-validator.js';
import { loadOperators } from './load-operators.js';
import { collect, moduleOption } from './shared-flags.js';
import { PROCESS_OUTPUT } from './command-output.js';
import { messageOf } from '../error-text.js';

/** Exit code when the validators refuse the bundle. */
export const EXIT_REFUSED = 2;
/** Exit code of every other failure. */
export const EXIT_ERROR = 1;

/** The flags of `cdk8s-operator package olm`. */
export interface PackageOlmOptions {
  /** Bundle directory (`--out`); created when missing, its manifests/ and metadata/ replaced. */
  readonly out: string;
  /** Module exporting `addOperators` (`--module`), relative to the working directory. @default as `render`: this repository's operators in a checkout */
  readonly module?: string;
  /** The operator to bundle (`--operator`, its `operatorName`). @default the module's only operator */
  readonly operator?: string;
  /** OLM package name (`--package`). @default the operator's name */
  readonly package?: string;
  /** Bundle version (`--version`), semver. @default package.json's `version` */
  readonly version?: string;
  /** Comma-separated channels (`--channels`). @default 'alpha' */
  readonly channels?: string;
  /** `--default-channel`. @default none */
  readonly defaultChannel?: string;
  /** `--display-name`. @default the package name */
  readonly displayName?: string;
  /** `--description`. @default package.json's `description` */
  readonly description?: string;
  /** `--provider`. @default package.json's `author` name */
  readonly provider?: string;
  /** `--maintainer "Name <email>"`, repeatable. @default package.json's `author` when it has an email */
  readonly maintainer?: readonly string[];
  /** `--link name=url`, repeatable. @default package.json's `homepage` and `repository` */
  readonly link?: readonly string[];
  /** Comma-separated `--keywords`. @default package.json's `keywords` */
  readonly keywords?: string;
  /** `--min-kube-version`. @default none */
  readonly minKubeVersion?: string;
  /** `--replaces`: the CSV name this bundle upgrades. @default none */
  readonly replaces?: string;
  /** `--require-validation`: fail when the validator program is not found. @default false: warn and succeed */
  readonly requireValidation?: boolean;
}

/** Where `runPackageOlm` reads and writes. */
export interface PackageOlmIo {
  /** Working directory: `--module`, `--out` and package.json resolve against it. */
  readonly cwd: string;
  /** Lines of what was written and the validation summary. */
  writeStdout(text: string): void;
  /** `warning: …` and `error: …` lines. */
  writeStderr(text: string): void;
  /** The SDK's package root (for the validator's cache path). @default packageRoot() */
  readonly sdkRoot?: string;
  /** Environment for locating the validator. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** Adds `olm` to the `package` command. */
export function registerPackageOlmCommand(packageCommand: Command): void {
  packageCommand
    .command('olm')
    .description('write an OLM bundle (ClusterServiceVersion, CRDs, metadata/annotations.yaml, bundle.Dockerfile) and check it with Operator Framework\'s validators')
    .requiredOption('--out <dir>', 'bundle directory (its manifests/ and metadata/ are replaced)')
    .addOption(moduleOption())
    .option('--operator <name>', 'the operator to bundle; default: the only one')
    .option('--package <name>', 'OLM package name; default: the operator name')
    .option('--version <semver>', "bundle version; default: package.json's version")
    .option('--channels <list>', 'comma-separated channels', 'alpha')
    .option('--default-channel <name>', 'default channel of the package')
    .option('--display-name <text>', 'display name; default: the package name')
    .option('--description <text>', "description (Markdown); default: package.json's description")
    .option('--provider <name>', "provider name; default: package.json's author")
    .option('--maintainer <name-email>', 'maintainer as "Name <email>" (repeatable); default: package.json\'s author', collect)
    .option('--link <name=url>', "link as name=url (repeatable); default: package.json's homepage and repository", collect)
    .option('--keywords <list>', "comma-separated keywords; default: package.json's keywords")
    .option('--min-kube-version <version>', 'minimum Kubernetes version, e.g. 1.30.0')
    .option('--replaces <csv>', 'name of the ClusterServiceVersion this bundle upgrades')
    .option('--require-validation', 'fail when the validator program (tools/olm-validate) is not found, instead of warning')
    .addHelpText('after', [
      '',
      'Exit codes: 0 written (and valid, or not validated without --require-validation), 2 the validators refused the bundle,',
      '1 any other error. The validators are github.com/operator-framework/api\'s, as `operator-sdk bundle validate',
      '--select-optional suite=operatorframework` runs them; build them with `bash node_modules/cdk8s-operator-sdk/tools/olm-validate/build.sh`.',
    ].join('\n'))
    .action(async (options: PackageOlmOptions) => {
      process.exitCode = await runPackageOlm(options, {
        cwd: process.cwd(),
        ...PROCESS_OUTPUT,
      });
    });
}

/** Runs the command; returns the exit code. */
export async function runPackageOlm(options: PackageOlmOptions, io: PackageOlmIo): Promise<number> {
  const fail = (message: string): number => {
    io.writeStderr(`error: ${message}\n`);
    return EXIT_ERROR;
  };
  let operator: Operator;
  let objects: Manifest[];
  try {
    const set = await loadOperators({ modulePath: options.module, cwd: io.cwd });
    if (options.operator === undefined && set.operators.length > 1) {
      return fail(`the module has ${set.operators.length} operators; name one with --operator (${set.names().join(', ')})`);
    }
    operator = set.pick(options.operator)[0]!;
    const problems = set.app.node.findAll().flatMap((c) => c.node.validate().map((e) => `${c.node.path}: ${e}`));
    if (problems.length > 0) return fail(`synthesis failed:\n  ${problems.join('\n  ')}`);
    objects = set.app.charts
      .filter((chart) => chart === operator || isUnder(chart, operator))
      .flatMap((chart) => chart.toJson() as Manifest[]);
  } catch (error) {
    return fail(messageOf(error));
  }

  let meta: CsvMetadata;
  try {
    meta = csvMetadata(options, operator.operatorName, readProjectManifest(io.cwd));
  } catch (error) {
    return fail(messageOf(error));
  }

  const dir = resolve(io.cwd, options.out);
  try {
    const bundle = buildOlmBundle(operator, objects, meta);
    const written = writeOlmBundle(dir, bundle);
    io.writeStdout(`wrote the OLM bundle of ${operator.operatorName} (${String(bundle.csv.metadata?.name)}) to ${dir}:\n${written.map((f) => `  ${f}\n`).join('')}`);
  } catch (error) {
    return fail(messageOf(error));
  }

  let sdkRoot = io.sdkRoot;
  try {
    sdkRoot ??= packageRoot();
  } catch {
    sdkRoot = undefined;
  }
  const located = locateOlmValidator(sdkRoot, io.env ?? process.env);
  if (located.file === undefined) {
    const build = sdkRoot === undefined ? 'tools/olm-validate/build.sh' : join(sdkRoot, 'tools', 'olm-validate', 'build.sh');
    const message = `bundle NOT validated: Operator Framework's validator (olm-validate) was not found (looked at ${located.candidates.join(', ')}); build it with \`bash ${build}\` (Go >= 1.26)`;
    if (options.requireValidation) return fail(message);
    io.writeStderr(`warning: ${message}, or pass --require-validation to make this an error\n`);
    return 0;
  }
  try {
    const report = await runOlmValidator(located.file, dir);
    const errors = reportErrors(report);
    const warnings = reportWarnings(report);
    for (const warning of warnings) io.writeStderr(`warning: ${warning}\n`);
    for (const error of errors) io.writeStderr(`error: ${error}\n`);
    if (errors.length > 0) {
      io.writeStderr(`error: Operator Framework's validators (operator-framework/api ${report.validatorVersion}) refused the bundle in ${dir}: ${errors.length} error(s)\n`);
      return EXIT_REFUSED;
    }
    io.writeStdout(`validated by Operator Framework's validators (operator-framework/api ${report.validatorVersion}): 0 errors, ${warnings.length} warning(s)\n`);
    return 0;
  } catch (error) {
    return fail(messageOf(error));
  }
}

/** The fields of a project's package.json the CSV defaults from. */
interface ProjectManifest {
  readonly version?: string;
  readonly description?: string;
  readonly author?: string | { name?: string; email?: string; url?: string };
  readonly homepage?: string;
  readonly repository?: string | { url?: string };
  readonly keywords?: string[];
}

function readProjectManifest(cwd: string): ProjectManifest {
  const file = join(cwd, 'package.json');
  if (!existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ProjectManifest;
  } catch (error) {
    throw new Error(`cannot read ${file}: ${messageOf(error)}`);
  }
}

/**
 * The CSV fields from the flags, defaulting from the project's package.json.
 * @throws Error naming the flag of a malformed `--maintainer`, `--link` or `--version`
 */
export function csvMetadata(options: PackageOlmOptions, operatorName: string, project: ProjectManifest): CsvMetadata {
  const version = options.version ?? project.version;
  if (version === undefined) throw new Error('--version: no bundle version given and no package.json with a version in the working directory');
  if (!/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(version)) throw new Error(`--version: ${JSON.stringify(version)} is not a semantic version (X.Y.Z)`);
  const author = parsePerson(project.author);
  const maintainers = options.maintainer?.map((text) => {
    const person = parsePerson(text);
    if (person?.email === undefined) throw new Error(`--maintainer: ${JSON.stringify(text)} is not "Name <email>"`);
    return { name: person.name, email: person.email };
  }) ?? (author?.email ? [{ name: author.name, email: author.email }] : []);
  const links = options.link?.map((text) => {
    const at = text.indexOf('=');
    if (at <= 0) throw new Error(`--link: ${JSON.stringify(text)} is not name=url`);
    return { name: text.slice(0, at), url: text.slice(at + 1) };
  }) ?? [
    ...(project.homepage ? [{ name: 'Homepage', url: project.homepage }] : []),
    ...(repositoryUrl(project.repository) ? [{ name: 'Source', url: repositoryUrl(project.repository)! }] : []),
  ];
  const channels = (options.channels ?? 'alpha').split(',').map((c) => c.trim()).filter(Boolean);
  if (channels.length === 0) throw new Error('--channels: no channel given');
  return {
    packageName: options.package ?? operatorName,
    version,
    channels,
    defaultChannel: options.defaultChannel,
    displayName: options.displayName,
    description: options.description ?? (project.description || undefined),
    provider: options.provider ?? author?.name,
    maintainers,
    links,
    keywords: options.keywords?.split(',').map((k) => k.trim()).filter(Boolean) ?? project.keywords,
    minKubeVersion: options.minKubeVersion,
    replaces: options.replaces,
  };
}

/** npm's person forms: `Name <email> (url)` or `{ name, email, url }`. */
function parsePerson(person: ProjectManifest['author']): { name: string; email?: string } | undefined {
  if (person === undefined) return undefined;
  if (typeof person === 'object') return person.name ? { name: person.name, email: person.email } : undefined;
  const match = /^\s*([^<(]*?)\s*(?:<([^>]+)>)?\s*(?:\(([^)]*)\))?\s*$/.exec(person);
  if (!match?.[1]) return undefined;
  return { name: match[1], email: match[2] };
}

function repositoryUrl(repository: ProjectManifest['repository']): string | undefined {
  const url = typeof repository === 'string' ? repository : repository?.url;
  if (!url) return undefined;
  const https = url.replace(/^git\+/, '').replace(/\.git$/, '').replace(/^git:\/\//, 'https://').replace(/^github:/, 'https://github.com/');
  return /^https?:\/\//.test(https) ? https : undefined;
}

function isUnder(construct: IConstruct, ancestor: IConstruct): boolean {
  return construct.node.scopes.includes(ancestor);
}
