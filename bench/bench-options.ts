/**
 * The benches' one option parser: node:util `parseArgs`, strict, over `process.argv.slice(2)` (or the
 * `args` given), with the benches' options declared as parseArgs declares them (string or boolean, with
 * their defaults). A number option is a string option read through `number(name)`.
 *
 * ```ts
 * const { values, number } = benchOptions({ crs: { type: 'string', default: '1000' }, child: { type: 'boolean', default: false } });
 * const CRS = number('crs');
 * ```
 *
 * Errors (thrown at once, before the bench starts anything):
 * - an option that is not declared, e.g. the typo `--cr 5000`: parseArgs' own error naming it
 *   (`Unknown option '--cr'`), where a hand-written parser ran the defaults;
 * - a string option without its value, a boolean one given a value (`--child=1`), and a positional
 *   argument unless `allowPositionals`: parseArgs' own errors;
 * - `number(name)` of a value that is not a finite number (`--crs abc`, `--crs ''`, an option without
 *   default that was not given): an error naming the option and the value, where `Number()` gave NaN.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type OptionsSpec = NonNullable<ParseArgsConfig['options']>;
/** What parseArgs returns for `options`: a string or boolean per option, required where it has a default. */
type Values<O extends OptionsSpec> = ReturnType<typeof parseArgs<{ options: O; strict: true }>>['values'];
type StringOption<O extends OptionsSpec> = { [K in keyof O]: O[K]['type'] extends 'string' ? K : never }[keyof O] & string;

export interface BenchOptions<O extends OptionsSpec> {
  readonly values: Values<O>;
  /** Empty unless `allowPositionals`. */
  readonly positionals: string[];
  /** The string option `name` as a finite number; an error naming it and its value otherwise. */
  number(name: StringOption<O>): number;
}

export function benchOptions<const O extends OptionsSpec>(options: O, { args = process.argv.slice(2), allowPositionals = false }: { args?: readonly string[]; allowPositionals?: boolean } = {}): BenchOptions<O> {
  const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals });
  return {
    values: values as Values<O>,
    positionals,
    number: (name) => finiteNumber(name, (values as Record<string, string | undefined>)[name]),
  };
}

/** `text`, the value of `--option` (or one item of a list it holds), as a finite number; an error naming both otherwise. */
export function finiteNumber(option: string, text: string | undefined): number {
  const value = text === undefined || text.trim() === '' ? NaN : Number(text);
  if (!Number.isFinite(value)) throw new Error(text === undefined ? `--${option}: no value` : `--${option} ${JSON.stringify(text)}: not a finite number`);
  return value;
}
