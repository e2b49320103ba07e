/**
 * Duration flags of the `cdk8s-operator` commands (`--graceful-shutdown-timeout 30s`,
 * `--cache-sync-timeout 2m`, `--leader-elect-lease-duration 15s`, `dev --timeout 180s`): Go's
 * `time.ParseDuration` spelling, as the flags of controller-runtime managers and kube components take
 * them, parsed into milliseconds for the options that end in `Ms`.
 */
import { InvalidArgumentError, Option } from 'commander';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration flag the way Go's `time.ParseDuration` spells them (`30s`, `1m30s`, `500ms`, `2h`),
 * or a bare number of seconds (`30`); returns milliseconds.
 * @throws InvalidArgumentError (commander prints it) for anything else, or a negative value
 */
export function parseDurationMs(value: string): number {
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let match = part.exec(text); match; match = part.exec(text)) {
    total += Number(match[1]) * UNIT_MS[match[2]];
    consumed = part.lastIndex;
  }
  if (text.length === 0 || consumed !== text.length) {
    throw new InvalidArgumentError(`"${value}" is not a duration (e.g. 30s, 1m30s, 500ms, or seconds)`);
  }
  return Math.round(total);
}

/**
 * A duration flag: its value parsed by {@link parseDurationMs} into milliseconds.
 * @param defaultMs the default in milliseconds, shown in the help as `defaultLabel` (e.g. `300s`); none when undefined
 */
export function durationOption(flags: string, description: string, defaultMs?: number, defaultLabel?: string): Option {
  const option = new Option(flags, description).argParser(parseDurationMs);
  return defaultMs === undefined ? option : option.default(defaultMs, defaultLabel);
}
