import { ApiObject, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';

/** The label cdk8s-plus puts on every pod template; its value is derived from the construct path. */
const ADDRESS_LABEL_POINTER = 'cdk8s.io~1metadata.addr';

/**
 * Selects a workload's pods by the given labels instead of cdk8s-plus's construct-path label.
 *
 * cdk8s-plus derives its default selector from the construct path, and every CR an operator renders
 * has the same path, so two CRs in one namespace would select each other's pods. The workload must be
 * created with `select: false`. The construct-path label is also removed from the pod template so that
 * renaming a construct never rolls the pods.
 *
 * @param podTemplatePointer JSON pointer of the pod template in the manifest (`/spec/template` for
 *   Deployments and StatefulSets, `/spec/jobTemplate/spec/template` for CronJobs).
 */
export function selectByLabels(
  workload: kplus.Workload,
  labels: Readonly<Record<string, string>>,
  podTemplatePointer = '/spec/template',
): void {
  if (!(workload instanceof kplus.CronJob) && !(workload instanceof kplus.Job)) {
    workload.select(kplus.LabelSelector.of({ labels: { ...labels } }));
  }
  for (const [key, value] of Object.entries(labels)) workload.podMetadata.addLabel(key, value);
  ApiObject.of(workload).addJsonPatch(JsonPatch.remove(`${podTemplatePointer}/metadata/labels/${ADDRESS_LABEL_POINTER}`));
}
