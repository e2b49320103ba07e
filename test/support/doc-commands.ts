/**
 * The command lines of the docs' ```sh blocks: split into simple commands with shell-quote (operators
 * `&&`, `|`, `;` … and `$( … )` substitutions each start one), and the `cdk8s-operator` invocations
 * among them parsed by the real command line — every subcommand of lib/cli/commands.ts, registered as lib/cli/main.ts does,
 * each action replaced by a no-op — so an unknown subcommand, flag or bad flag value fails here
 * exactly as it would for a reader, without running anything.
 */
import { Command, CommanderError } from 'commander';
import { parse } from 'shell-quote';
import { COMMANDS } from '../../lib/cli/commands.js';

/** One simple command of a shell line: its words, shell variables left as `$NAME` placeholders. */
export type SimpleCommand = string[];

const SUBSTITUTION = /\$\(([^()]*)\)/g;

/**
 * The simple commands of one shell line (comments dropped; a `$( … )` substitution is a command of its
 * own and stands as one word in the outer one). Environment assignments before a command are dropped.
 */
export function simpleCommands(line: string): SimpleCommand[] {
  const inner: SimpleCommand[] = [];
  const outer = line.replace(SUBSTITUTION, (_all, command: string) => {
    inner.push(...simpleCommands(command));
    return 'SUBSTITUTED';
  });
  const commands: SimpleCommand[] = [[]];
  for (const token of parse(outer, (name) => `$${name}`)) {
    if (typeof token === 'string') commands.at(-1)!.push(token);
    else if ('comment' in token) break;
    else if ('op' in token && token.op !== 'glob') commands.push([]);
    else if ('pattern' in token) commands.at(-1)!.push(token.pattern);
  }
  const withoutAssignments = commands.map((words) => {
    let at = 0;
    while (at < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[at]!)) at++;
    return words.slice(at);
  });
  return [...withoutAssignments, ...inner].filter((words) => words.length > 0);
}

/**
 * The arguments after the program name when `words` runs the SDK's CLI (`cdk8s-operator …`,
 * `npx [npx flags] cdk8s-operator …`, `node …/bin/cdk8s-operator.js …`), else undefined.
 */
export function cliArguments(words: SimpleCommand): string[] | undefined {
  if (words[0] === 'cdk8s-operator') return words.slice(1);
  if (words[0] === 'npx') {
    const at = words.indexOf('cdk8s-operator');
    // only npx's own flags (and --package's value) before it
    if (at > 0 && words.slice(1, at).every((word, i, all) => word.startsWith('-') || all[i - 1] === '--package')) return words.slice(at + 1);
    return undefined;
  }
  if (words[0] === 'node' && /(^|\/)cdk8s-operator\.js$/.test(words[1] ?? '')) return words.slice(2);
  return undefined;
}

/** The `cdk8s-operator` program with every subcommand, actions replaced by no-ops, errors thrown. */
async function parseOnlyProgram(output: string[]): Promise<Command> {
  const program = new Command('cdk8s-operator').version('0.0.0', '-V, --version').enablePositionalOptions();
  // One at a time: jest's ESM loader fails concurrent dynamic imports of shared modules ("not in cache").
  for (const load of Object.values(COMMANDS)) (await load())(program);
  const quiet = (command: Command): void => {
    command.exitOverride().configureOutput({ writeOut: (text) => output.push(text), writeErr: (text) => output.push(text) });
    if (command.commands.length === 0) command.action(() => undefined);
    for (const sub of command.commands) quiet(sub);
  };
  quiet(program);
  return program;
}

/**
 * Why the CLI refuses `args` (commander's own message: unknown command or option, missing argument,
 * bad value), or undefined when it accepts them (`--help` and `--version` too).
 */
export async function cliRefusal(args: string[]): Promise<string | undefined> {
  const output: string[] = [];
  try {
    await (await parseOnlyProgram(output)).parseAsync(args, { from: 'user' });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError && (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help')) return undefined;
    if (error instanceof CommanderError) return error.message;
    throw error;
  }
}
