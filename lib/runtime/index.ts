/**
 * `cdk8s-operator-sdk/runtime`: the shared reconcile runtime. Re-exports only.
 * ESM only (it loads @kubernetes/client-node 1.4, which is ESM-only). runOperators() is the one start-up
 * path: `cdk8s-operator run` (and so the operator image) is a thin CLI over it.
 */
export { Manager, type ManagerOptions, type RunnableOperator } from './manager.js';
export { runOperators, type RunOperatorsOptions, type RunLeaderElection, type StartedServers } from './run-operators.js';
export { KubeConfigError, type KubeConfigFailureReason, type KubeConfigSource } from './client/kube-config-source.js';
// The client the runtime's parts take: `client` of startWebhookServer, startRunWebhooks and ServingCertificate (Manager.client is one).
export type { KubeClient } from './client/kube-client.js';
// The runtime's errors (runtime-error.ts): what runOperators rejects with, each naming its step.
export { RuntimeError, type RuntimeErrorOptions, type RuntimeStep, type ObjectReference } from './runtime-error.js';
export { runtimeErrorOf } from './error-chain.js';
export { CredentialsError, type CredentialsFailureReason } from './client/client-credentials.js';
export { ServerStartError, type ServerStartFailureReason, type ServerStep } from './server-start-error.js';
export { WebhookCertificateError, type WebhookCertificateFailureReason } from './webhook/serving-certificate.js';
export { RbacSelfCheckError, AccessReviewError } from './startup/rbac-self-check.js';
export { CacheSyncError, type CacheSyncFailureReason, type UnsyncedInformer } from './cache/cache-sync-error.js';
export { LeadershipLostError } from './lease/leader-election.js';
export { LeaderElectionConfigError } from './lease/lease-timing.js';
export { TracingConfigError, type TracingConfigFailureReason } from './tracing/tracing-from-env.js';
export { TerminalError } from './errors.js';
export type { ReconcileResult } from './reconcile/reconciler.js';
export { DESIRED_HASH_ANNOTATION } from './reconcile/child-diff.js';
export { startWebhookServer, DEFAULT_WEBHOOK_BIND_ADDRESS, type WebhookServer, type WebhookServerOptions } from './webhook/webhook-server.js';
export { ServingCertificate, type ServingCertificateOptions, type CaBundleTargets } from './webhook/serving-certificate.js';
export { startRunWebhooks, type RunWebhooks, type RunWebhooksOptions } from './webhook/webhook-runner.js';
