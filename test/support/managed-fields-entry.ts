/** A managedFields entry as the API server writes it (apiVersion v1, a fixed time), for the unit tests of the managedFields take-overs. */
import type { ManagedFieldsEntry } from '../../lib/runtime/reconcile/managed-fields.js';

export const managedFieldsEntry = (manager: string, operation: string, fieldsV1: object, extra: Partial<ManagedFieldsEntry> = {}): ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion: 'v1',
  time: '2026-01-01T00:00:00Z',
  fieldsType: 'FieldsV1',
  fieldsV1: fieldsV1 as ManagedFieldsEntry['fieldsV1'],
  ...extra,
});
