/**
 * The built-in resources the runtime and the CLI address themselves, as {@link ResourceRef}s
 * (kubernetes.io/docs/reference/kubernetes-api/): one declaration each.
 */
import type { ResourceRef } from './resource-path.js';

/** apiextensions.k8s.io/v1 CustomResourceDefinition (cluster-scoped). */
export const CUSTOM_RESOURCE_DEFINITIONS: ResourceRef = { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', namespaced: false };
/** coordination.k8s.io/v1 Lease. */
export const LEASES: ResourceRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
/** v1 Secret. */
export const SECRETS: ResourceRef = { group: '', version: 'v1', plural: 'secrets', namespaced: true };
/** v1 Namespace (cluster-scoped). */
export const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
/** events.k8s.io/v1 Event. */
export const EVENTS: ResourceRef = { group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true };
/** authorization.k8s.io/v1 SelfSubjectAccessReview (cluster-scoped, create only). */
export const SELF_SUBJECT_ACCESS_REVIEWS: ResourceRef = { group: 'authorization.k8s.io', version: 'v1', plural: 'selfsubjectaccessreviews', namespaced: false };
/** authorization.k8s.io/v1 SubjectAccessReview (cluster-scoped, create only). */
export const SUBJECT_ACCESS_REVIEWS: ResourceRef = { group: 'authorization.k8s.io', version: 'v1', plural: 'subjectaccessreviews', namespaced: false };
/** authentication.k8s.io/v1 TokenReview (cluster-scoped, create only). */
export const TOKEN_REVIEWS: ResourceRef = { group: 'authentication.k8s.io', version: 'v1', plural: 'tokenreviews', namespaced: false };
/** apps/v1 Deployment. */
export const DEPLOYMENTS: ResourceRef = { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true };
/** admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration (cluster-scoped). */
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceRef = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'validatingwebhookconfigurations', namespaced: false };
/** admissionregistration.k8s.io/v1 MutatingWebhookConfiguration (cluster-scoped). */
export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceRef = { group: 'admissionregistration.k8s.io', version: 'v1', plural: 'mutatingwebhookconfigurations', namespaced: false };
/** v1 Pod. */
export const PODS: ResourceRef = { group: '', version: 'v1', plural: 'pods', namespaced: true };
