/**
 * zod is a peer dependency: the user's copy is the one the SDK uses. The SDK needs zod 4.1 or later (its
 * `toJSONSchema` with the `openapi-3.0` target, and the `_zod` internals of v4 schemas); zod 3 fails
 * deep inside with `Cannot read properties of undefined (reading 'def')` and 4.0 with `Invalid target`.
 * These checks turn that into one clear error.
 */
import { z } from 'zod';

/** The zod versions the SDK works with, as its package.json peer range says. */
export const REQUIRED_ZOD = 'zod@^4.1.0';

/** The installed zod's version (zod 4 exports `z.core.version`), or null for zod 3. */
export function installedZod(): { major: number; minor: number } | null {
  return (z as { core?: { version?: { major: number; minor: number } } }).core?.version ?? null;
}

/**
 * Why `schema` (given for the field `field`, e.g. `spec`) cannot be used, or undefined when it is a zod 4
 * schema and the `installed` zod is recent enough.
 *
 * @param installed the zod version to check, null for zod 3; default {@link installedZod}(), the copy
 *   this module imports (the user's, zod being a peer dependency); tests pass others
 */
export function zodVersionProblem(field: string, schema: unknown, installed = installedZod()): string | undefined {
  if (installed === null || installed.major !== 4 || installed.minor < 1) {
    const found = installed === null ? 'zod 3 or older' : `zod ${installed.major}.${installed.minor}`;
    return `cdk8s-operator-sdk needs ${REQUIRED_ZOD}, found ${found}: npm install zod@^4.1.0`;
  }
  if (schema === null || typeof schema !== 'object') return `${field}: expected a zod 4 schema, got ${schema === null ? 'null' : typeof schema}`;
  if (!('_zod' in schema)) {
    const v3 = '_def' in schema ? ' (this one is a zod 3 schema)' : '';
    return `${field}: expected a zod 4 schema${v3}: cdk8s-operator-sdk needs ${REQUIRED_ZOD}; import { z } from 'zod' with zod 4 installed`;
  }
  return undefined;
}
