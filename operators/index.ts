/**
 * The project's example operators. `synth/main.ts` synthesizes them and the CLI (`render`, `run`) loads
 * them when no `--module` is given; a user's module exports the same function.
 */
import type { Construct } from 'constructs';
import type { Operator } from 'cdk8s-operator-sdk';
import { AppOperator } from './app/index.js';
import { DatabaseOperator, type DatabaseOperatorProps } from './database/index.js';
import { MemcachedOperator } from './memcached/index.js';

export interface ExampleOperatorsOptions {
  /** Settings of the database operator (its credentials key). @default the published dev key */
  readonly database?: DatabaseOperatorProps;
}

/** Adds one construct per example operator to `scope` (an App) and returns them in a fixed order. */
export function addOperators(scope: Construct, options: ExampleOperatorsOptions = {}): Operator[] {
  return [
    new MemcachedOperator(scope),
    new AppOperator(scope),
    new DatabaseOperator(scope, undefined, options.database),
  ];
}

export { AppOperator, DatabaseOperator, MemcachedOperator };
