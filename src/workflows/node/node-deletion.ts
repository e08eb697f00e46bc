import { foldEniOutcomes, recordEniForDeletion, releaseIpsOfGonePods, sortedKeys } from '../../ipam/index.js';
import type { NetworkInterfaces, NodeCr, NodeStatus } from '../../ipam/index.js';
import { EniOperator } from './eni-operator.js';
import { removeNodeFinalizer } from './node-io.js';
import type { OperationTracker } from './operation-tracker.js';
import type { PassRecord } from './pass-record.js';

/**
 * A Node CR being deleted: every managed ENI is detached and deleted, the emptied status written, and the
 * finalizer removed so the CR can go. Failures are retried by the next pass (with backoff).
 */
export async function releaseDeletedNode(input: {
  node: NodeCr;
  nodeName: string;
  clusterId: string;
  enis: NetworkInterfaces;
  tracker: OperationTracker;
  record: PassRecord;
  writeStatus: (write: { status: NodeStatus; current: NodeStatus; enis: NetworkInterfaces }) => Promise<boolean>;
  /** Whether the CR was found gone meanwhile (by the status write). */
  isGone: () => boolean;
}): Promise<'released' | 'failed' | 'gone'> {
  const { node } = input;
  // The node is going away with its pods: their bindings go too, so the ENIs can be removed. Unschedulable ENIs
  // are not ours and stay attached.
  let enis = releaseIpsOfGonePods({ enis: input.enis, requests: [] }).enis;
  for (const eniId of sortedKeys(enis)) {
    if (enis[eniId]?.unschedulable !== true) enis = recordEniForDeletion({ enis, eniId });
  }
  const operator = new EniOperator({
    nodeName: input.nodeName,
    instanceId: node.spec.nodeMetadata?.instanceID ?? '',
    clusterId: input.clusterId,
    tracker: input.tracker,
  });
  const gc = await operator.collectGarbage(enis);
  enis = foldEniOutcomes(
    enis,
    gc.reports.flatMap((report) => report.outcomes),
  );
  input.record.foldReports(gc.reports);
  const written = await input.writeStatus({ status: { networkInterfaces: enis }, current: node.status ?? {}, enis });
  if (gc.result.failed.length > 0 || !written) return 'failed';
  if (input.isGone()) return 'gone';
  const finalizerFailure = await removeNodeFinalizer(input.nodeName);
  if (finalizerFailure !== undefined) {
    input.record.record(finalizerFailure, { ledger: true });
    return 'failed';
  }
  return 'released';
}
