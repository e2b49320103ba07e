import * as kplus from 'cdk8s-plus-28';
import { k8s } from 'cdk8s-plus-28';

/**
 * Security settings that satisfy the Pod Security "restricted" profile for the workloads the example
 * operators render (https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted).
 *
 * cdk8s-plus-28 sets `runAsNonRoot: true` without a uid, which the kubelet refuses for images whose
 * user is a name rather than a number; so every workload names the numeric uid its image runs as.
 */
export function restrictedPodSecurity(uid: number): kplus.PodSecurityContextProps {
  return { user: uid, group: uid, fsGroup: uid, ensureNonRoot: true };
}

/** The container half of {@link restrictedPodSecurity}: read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp. */
export function restrictedContainerSecurity(uid: number): kplus.ContainerSecurityContextProps {
  return {
    user: uid,
    group: uid,
    ensureNonRoot: true,
    privileged: false,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: [kplus.Capability.ALL] },
    seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
  };
}

/** {@link restrictedPodSecurity} for the generated `k8s.*` classes. */
export function restrictedPodSecurityContext(uid: number): k8s.PodSecurityContext {
  return { runAsUser: uid, runAsGroup: uid, fsGroup: uid, runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } };
}

/** {@link restrictedContainerSecurity} for the generated `k8s.*` classes. */
export function restrictedContainerSecurityContext(uid: number): k8s.SecurityContext {
  return {
    runAsUser: uid,
    runAsGroup: uid,
    runAsNonRoot: true,
    privileged: false,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}
