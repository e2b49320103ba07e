/**
 * The status fields the runtime writes itself, in a file of its own: the runtime's status writer and
 * render results read it without loading the CRD generator (crd.ts, structural-schema.ts and zod), which
 * only synthesis needs.
 */
import type { OperatorStatus } from './crd.js';

/** The status fields the runtime writes itself: an operator's own status schema and render's status may not set them. */
export const RUNTIME_STATUS_FIELDS: readonly (keyof OperatorStatus)[] = ['observedGeneration', 'conditions', 'children'];
