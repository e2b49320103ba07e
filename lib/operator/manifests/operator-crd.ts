/**
 * The operator's CustomResourceDefinition as a child construct of the `Operator` chart; the manifest is
 * schema/crd.ts's {@link buildCrdManifest}.
 * @see https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { buildCrdManifest, type CrdOptions } from '../schema/crd.js';

/** Props of an {@link OperatorCrd}: the CRD's names, scope, schemas, versions and conversion (see {@link CrdOptions}). */
export type OperatorCrdProps = CrdOptions;

/** The apiextensions.k8s.io/v1 CustomResourceDefinition of the operator's kind. */
export class OperatorCrd extends ApiObject {
  /** @throws StructuralSchemaError when the spec or status schema has no structural form */
  constructor(scope: Construct, id: string, props: OperatorCrdProps) {
    super(scope, id, buildCrdManifest(props) as { apiVersion: string; kind: string });
  }
}
