/**
 * Labels stamped on every child by `renderChildren`, and on the operator's own objects at synth time.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/
 */
import { createHash } from 'node:crypto';

/** Value: the operator name (also its field manager). Lets `kubectl get -l` find everything an operator manages. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** Value: the CR's name (shortened, see {@link toLabelValue}). */
export const INSTANCE_LABEL = 'app.kubernetes.io/instance';
/** Value: the CR's metadata.uid. The key a label-selected child cache and prune use to find a CR's children. */
export const OWNER_UID_LABEL = 'operator.cdk8s.io/owner-uid';
/**
 * Value: the application's name. On the operator's own objects (Deployment selector, RBAC, CRD) the
 * operator name; in `selectorLabels` (selector-labels.ts) the name render() gives a CR's pods.
 */
export const NAME_LABEL = 'app.kubernetes.io/name';
/** Value: `operator` on the operator's own objects. */
export const COMPONENT_LABEL = 'app.kubernetes.io/component';

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Makes a string a valid label value (≤ 63 characters of `[A-Za-z0-9._-]`, alphanumeric at both ends).
 * Valid values are returned unchanged; longer or invalid ones become a deterministic
 * `<cleaned prefix>-<8 hex of sha256>` (CR names may be up to 253 characters).
 */
export function toLabelValue(value: string): string {
  if (value.length <= 63 && LABEL_VALUE.test(value)) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 8);
  const cleaned = value
    .replace(/[^-A-Za-z0-9_.]/g, '-')
    .slice(0, 54)
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/[^A-Za-z0-9]+$/, '');
  return cleaned ? `${cleaned}-${hash}` : hash;
}

/** The labels every child of a CR carries. */
export function childLabels(operatorName: string, cr: { metadata: { name: string; uid?: string } }): Record<string, string> {
  const labels: Record<string, string> = {
    [INSTANCE_LABEL]: toLabelValue(cr.metadata.name),
    [MANAGED_BY_LABEL]: toLabelValue(operatorName),
  };
  if (cr.metadata.uid) labels[OWNER_UID_LABEL] = toLabelValue(cr.metadata.uid);
  return labels;
}

/** The labels of the operator's own objects (CRD, RBAC, Deployment). */
export function operatorLabels(operatorName: string): Record<string, string> {
  return { [COMPONENT_LABEL]: 'operator', [NAME_LABEL]: toLabelValue(operatorName) };
}
