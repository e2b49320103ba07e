/**
 * The logger of the `cdk8s-operator` commands (`run`, `dev`): pino writing JSON lines for machines or
 * pino-pretty's text for humans (`--log-level`, `--log-format`). The runtime takes it as its `Logger`
 * (lib/runtime/logger.ts); nothing under lib/runtime imports this file.
 */
import { type Logger as PinoLogger, type LevelWithSilent, levels, pino } from 'pino';
import { createRequire } from 'node:module';
import type PinoPretty from 'pino-pretty';

/** `--log-format`: one JSON object per line (machines, the default), or pino-pretty's text (humans). */
export type LogFormat = 'json' | 'text';

/** Options of {@link createCliLogger}. */
export interface CliLoggerOptions {
  /** pino level: trace, debug, info, warn, error, fatal or silent. @default 'info': start-up, leadership and errors; a successful reconcile's line is at debug */
  readonly level?: string;
  /** `json` or `text`. @default 'json': one object per line, what log collectors read from a container */
  readonly format?: LogFormat;
  /**
   * With format `text`: fields left out of each line besides pid, hostname and component, e.g. the
   * reconcile bindings `dev` leaves out (reconcileID, controller …). JSON lines always keep every field.
   * @default none
   */
  readonly textOmits?: readonly string[];
  /** Base fields on every line. @default { component: 'cdk8s-operator' } */
  readonly base?: Record<string, unknown>;
  /** Where lines go: a file descriptor or a file path. @default stdout (file descriptor 1), where a container's logs are read */
  readonly destination?: number | string;
}

/**
 * The CLI's logger: pino, JSON lines or (format `text`) pino-pretty's human-readable lines, both
 * written synchronously so nothing is lost when the process exits right after a line. Text is one line per
 * record, its fields as JSON on it (pino-pretty's `singleLine`); only an error's stack follows, a frame per line.
 * @throws Error for an unknown level or format, naming the valid ones
 */
export function createCliLogger(options: CliLoggerOptions = {}): PinoLogger {
  const level = options.level ?? 'info';
  if (level !== 'silent' && !(level in levels.values)) {
    throw new Error(`unknown log level "${level}"; one of ${[...Object.keys(levels.values), 'silent'].join(', ')}`);
  }
  const format = options.format ?? 'json';
  const base = options.base ?? { component: 'cdk8s-operator' };
  const dest = options.destination ?? 1;
  if (format === 'json') return pino({ level: level as LevelWithSilent, base }, pino.destination({ dest, sync: true }));
  if (format === 'text') {
    return pino(
      { level: level as LevelWithSilent, base },
      // Loaded only for `text` (pino-pretty and its dependencies are about 30 modules): JSON, the default, never loads it.
      (createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty)({ destination: dest, sync: true, colorize: false, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: ['pid', 'hostname', 'component', ...(options.textOmits ?? [])].join(',') }),
    );
  }
  throw new Error(`unknown log format "${format as string}"; one of json, text`);
}
