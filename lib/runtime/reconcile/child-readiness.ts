/**
 * Whether a child counts as ready for its CR's `Ready` condition, per kind (Deployment, StatefulSet, Job,
 * PersistentVolumeClaim; any other kind when it exists), with the reason when it is not.
 */
import type { KubeObject } from '../client/kube-client.js';

/** Whether one child counts as ready for its CR's `Ready` condition, and why not. */
export interface ChildReadiness {
  readonly ready: boolean;
  /** Short human explanation when not ready, e.g. `Deployment web: 1/3 replicas available`. */
  readonly message?: string;
}

type Status = Record<string, unknown> & { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] };

/**
 * Readiness per kind (issue 4 §8):
 *
 * | kind | ready when |
 * |---|---|
 * | Deployment (apps) | condition Available=True and status.observedGeneration ≥ metadata.generation |
 * | StatefulSet (apps) | readyReplicas ≥ spec.replicas (default 1), observedGeneration current |
 * | Job (batch) | condition Complete=True |
 * | PersistentVolumeClaim (core) | status.phase = Bound |
 * | any other kind | it exists |
 *
 * @param obj the child as cached (or as returned by the apply); undefined when it does not exist
 */
export function childReadiness(obj: KubeObject | undefined, kindLabel?: string): ChildReadiness {
  if (!obj) return { ready: false, message: `${kindLabel ?? 'child'}: not found` };
  const kind = obj.kind ?? '';
  const group = (obj.apiVersion ?? '').includes('/') ? (obj.apiVersion ?? '').split('/')[0] : '';
  const name = `${kind} ${obj.metadata?.name ?? ''}`;
  const status = (obj.status ?? {}) as Status;
  const generation = obj.metadata?.generation;
  const observed = typeof status.observedGeneration === 'number' ? status.observedGeneration : undefined;
  const current = generation === undefined || (observed !== undefined && observed >= generation);
  const condition = (type: string) => status.conditions?.find((c) => c.type === type);

  if (group === 'apps' && kind === 'Deployment') {
    if (!current) return { ready: false, message: `${name}: generation ${generation} not yet observed` };
    const available = condition('Available');
    if (available?.status === 'True') return { ready: true };
    const wanted = ((obj.spec as { replicas?: number } | undefined)?.replicas ?? 1) as number;
    const have = (status.availableReplicas as number | undefined) ?? 0;
    return { ready: false, message: `${name}: ${have}/${wanted} replicas available` };
  }
  if (group === 'apps' && kind === 'StatefulSet') {
    if (!current) return { ready: false, message: `${name}: generation ${generation} not yet observed` };
    const wanted = ((obj.spec as { replicas?: number } | undefined)?.replicas ?? 1) as number;
    const ready = (status.readyReplicas as number | undefined) ?? 0;
    return ready >= wanted ? { ready: true } : { ready: false, message: `${name}: ${ready}/${wanted} replicas ready` };
  }
  if (group === 'batch' && kind === 'Job') {
    if (condition('Complete')?.status === 'True') return { ready: true };
    const failed = condition('Failed');
    if (failed?.status === 'True') return { ready: false, message: `${name}: failed: ${failed.message ?? failed.reason ?? ''}`.trim() };
    return { ready: false, message: `${name}: not complete` };
  }
  if (group === '' && kind === 'PersistentVolumeClaim') {
    const phase = status.phase as string | undefined;
    return phase === 'Bound' ? { ready: true } : { ready: false, message: `${name}: ${phase ?? 'Pending'}, not bound` };
  }
  return { ready: true };
}
