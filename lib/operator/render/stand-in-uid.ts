/**
 * The stand-in `metadata.uid` of a custom resource rendered offline.
 *
 * A CR gets its uid from the API server when it is created; render needs one for the children's
 * ownerReference and `operator.cdk8s.io/owner-uid` label. Every offline render of a CR without a uid
 * uses this one value: `renderForSnapshot` (and the other snapshot helpers), `cdk8s-operator render`, and
 * the Operator's render of its examples (deriving child kinds for RBAC). So the same CR renders the same
 * ownerReferences wherever it is rendered offline.
 *
 * @see https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#uids
 */

/**
 * `00000000-0000-4000-8000-00000000c0de`: a valid RFC 4122 version 4 UUID (as the API server's uids are)
 * that no server issues in practice.
 */
export const STAND_IN_UID = '00000000-0000-4000-8000-00000000c0de';
