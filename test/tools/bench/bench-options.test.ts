import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { benchOptions, finiteNumber } from '../../../bench/bench-options.js';

const spec = { crs: { type: 'string', default: '1000' }, only: { type: 'string' }, child: { type: 'boolean', default: false } } as const;

describe('bench options', () => {
  test('GIVEN no arguments WHEN parsed THEN each option has its default and a number option reads as a number', () => {
    const { values, positionals, number } = benchOptions(spec, { args: [] });
    expect(values).toEqual({ crs: '1000', child: false });
    expect(number('crs')).toBe(1000);
    expect(positionals).toEqual([]);
  });

  test('GIVEN options and a positional allowed WHEN parsed THEN the values given win and the positional is kept', () => {
    const { values, positionals, number } = benchOptions(spec, { args: ['profile.json', '--crs', '50', '--child', '--only=ApiClient'], allowPositionals: true });
    expect(values).toEqual({ crs: '50', only: 'ApiClient', child: true });
    expect(number('crs')).toBe(50);
    expect(positionals).toEqual(['profile.json']);
  });

  test('GIVEN an option that is not declared (a typo) WHEN parsed THEN the error names it instead of running the defaults', () => {
    expect(() => benchOptions(spec, { args: ['--cr', '5000'] })).toThrow("Unknown option '--cr'");
  });

  test('GIVEN a positional argument not allowed, or a string option without its value WHEN parsed THEN it is an error', () => {
    expect(() => benchOptions(spec, { args: ['5000'] })).toThrow(/positional argument/);
    expect(() => benchOptions(spec, { args: ['--crs'] })).toThrow(/--crs/);
  });

  test('GIVEN a number option that is not a finite number WHEN read THEN the error names the option and the value instead of NaN', () => {
    expect(() => benchOptions(spec, { args: ['--crs', 'abc'] }).number('crs')).toThrow('--crs "abc": not a finite number');
    expect(() => benchOptions(spec, { args: ['--crs='] }).number('crs')).toThrow('--crs "": not a finite number');
    expect(() => benchOptions(spec, { args: [] }).number('only')).toThrow('--only: no value');
    expect(finiteNumber('buckets', '1e3')).toBe(1000);
    expect(() => finiteNumber('to-ms', 'Infinity')).toThrow('--to-ms "Infinity": not a finite number');
  });

  test('GIVEN the benches WHEN their sources are read THEN none parses its options but through bench-options.ts (one parser: a bad number is an error, never NaN)', () => {
    const benchDir = fileURLToPath(new URL('../../../bench/', import.meta.url));
    const sources = readdirSync(benchDir).filter((f) => /\.(ts|mjs|cjs)$/.test(f) && f !== 'bench-options.ts');
    expect(sources).toContain('peers.ts');
    const ownParsers = sources.filter((f) => /\bparseArgs\s*\(/.test(readFileSync(benchDir + f, 'utf8')));
    expect(ownParsers).toEqual([]);
  });
});
