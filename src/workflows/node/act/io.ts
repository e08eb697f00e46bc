import { ApplicationFailure } from '@temporalio/workflow';

import {
  applyJsonDelta,
  canonicalJson,
  formatRfc3339,
  jsonDelta,
  poolStatusOf,
  sortedKeys,
  STATUS_CHANGE_DEPTH,
} from '../../../ipam/index.js';
import type {
  NetworkInterfaces,
  NodeStatus,
  PoolStatusFields,
  ReadyNodeSpec,
  VSwitchInfo,
} from '../../../ipam/index.js';
import type { NodeSnapshot, NodeView, NodeViewForPass } from '../../../activities/index.js';
import { ecsReadLocal, kubeRead, kubeReadLocal, statusWrite } from './activities.js';
import { noteSeenVersions } from '../memory/carried-state.js';
import type { CarriedState } from '../memory/carried-state.js';
import type { PassRecord } from '../memory/pass-record.js';
import { failureOf } from '../memory/step-failure.js';
import type { StepFailure } from '../memory/step-failure.js';

/** The snapshot the core reads, from the compact view (pods in `namespace/name` order). */
function snapshotOfView(view: NodeView): NodeSnapshot {
  const snapshot: NodeSnapshot = {
    nodeName: view.nodeName,
    pods: sortedKeys(view.pods).flatMap((key) => view.pods[key] ?? []),
  };
  if (view.cr !== undefined) snapshot.cr = view.cr;
  if (view.nodeRuntime !== undefined) snapshot.nodeRuntime = view.nodeRuntime;
  if (view.coreNode !== undefined) snapshot.coreNode = view.coreNode;
  return snapshot;
}

/**
 * The vSwitch lookup a pass's read can bring along: `ids` are those the node's last lookup needed (sent with the
 * read), `found` what the worker's cache held for all of them, fresh, at the read (undefined: not all were).
 * Rebuilt on replay like the view: `found` comes from the read's marker, `ids` from the passes before.
 */
export interface VSwitchPeek {
  ids?: string[];
  found?: Record<string, VSwitchInfo>;
}

/**
 * Reads a node as changes since the view it holds (in full the first time in a run), in a local activity: an
 * unchanged node costs one marker in history. The view is rebuilt on replay from the reads in history and never
 * carried, so a new run's first read is in full.
 */
export class NodeReader {
  private readonly nodeName: string;
  private held: { digest: string; view: NodeView } | undefined;
  /** The vSwitches the last read brought (see {@link readVSwitches}). */
  readonly vSwitchPeek: VSwitchPeek = {};
  /** The versions the last read had seen at least, by informer (undefined: a live read, or none yet this run). */
  seen: Record<string, string> | undefined;

  constructor(nodeName: string) {
    this.nodeName = nodeName;
  }

  /**
   * A view sent in full, with the pages after the first (a node with thousands of pods): each page is one small
   * marker. A worker that no longer holds the view answers with a fresh first page, which starts the view again.
   */
  private async restOfView(
    first: Extract<NodeViewForPass, { full: NodeView }>,
  ): Promise<{ digest: string; view: NodeView }> {
    let reply = first;
    let view = reply.full;
    while (reply.more !== undefined) {
      const next = await kubeReadLocal.readNodeView({
        nodeName: this.nodeName,
        page: { digest: reply.digest, after: reply.more },
      });
      if (!('full' in next)) throw ApplicationFailure.retryable('a page of the view came as changes', 'KubeStaleBase');
      view = next.after === undefined ? next.full : { ...view, pods: { ...view.pods, ...next.full.pods } };
      reply = next;
    }
    return { digest: reply.digest, view };
  }

  /** `after`: the resourceVersions the read must have seen (a worker's cache that is behind reads live). */
  async read(after: Record<string, string> | undefined): Promise<NodeSnapshot> {
    const held = this.held;
    const { ids } = this.vSwitchPeek;
    const reply = await kubeReadLocal.readNodeView({
      nodeName: this.nodeName,
      ...(held === undefined ? {} : { base: held.digest }),
      ...(after === undefined ? {} : { after }),
      ...(ids === undefined || ids.length === 0 ? {} : { vSwitchIds: ids }),
    });
    if (reply.vSwitches === undefined) delete this.vSwitchPeek.found;
    else this.vSwitchPeek.found = reply.vSwitches;
    this.seen = reply.seen;
    let view: NodeView;
    let digest = reply.digest;
    if ('full' in reply) ({ digest, view } = await this.restOfView(reply));
    else if (held?.digest === reply.base) view = applyJsonDelta(held.view, reply.changes);
    else {
      // The activity answers against the base sent, so this cannot happen; the next read, with no base, is in full.
      this.held = undefined;
      throw ApplicationFailure.retryable(`read answered against base ${reply.base}`, 'KubeStaleBase');
    }
    this.held = { digest, view };
    return snapshotOfView(view);
  }
}

/** What a status write did. */
export type StatusWriteResult =
  | { outcome: 'unchanged' }
  | { outcome: 'written'; resourceVersion: string }
  | { outcome: 'gone' }
  | { outcome: 'failed'; failed: StepFailure };

function ownedFields(status: NodeStatus, pool: PoolStatusFields | undefined): string {
  return canonicalJson({
    networkInterfaces: status.networkInterfaces ?? {},
    lastSyncOpenAPITime: status.lastSyncOpenAPITime,
    nextSyncOpenAPITime: status.nextSyncOpenAPITime,
    // Compared only when the pass owns them (a ready pass): the deletion path leaves them as they are.
    ...(pool === undefined ? {} : { pool: poolStatusOf(status) }),
  });
}

/**
 * Writes the status fields eniflow owns when they differ from the CR's (or when an earlier write did not land),
 * carrying only the ENI entries that changed. The activity retries until it lands; a write refused for good is
 * reported, and the caller keeps its ENIs for the next pass.
 */
export async function writeStatusIfChanged(input: {
  nodeName: string;
  status: NodeStatus;
  current: NodeStatus;
  force: boolean;
  /** Warm-up and idle reclaim fields to write (set or, when absent, removed); undefined: left as they are. */
  pool?: PoolStatusFields | undefined;
}): Promise<StatusWriteResult> {
  const { status, pool } = input;
  const withPool = pool === undefined ? status : { ...status, ...pool };
  if (!input.force && ownedFields(withPool, pool) === ownedFields(input.current, pool)) return { outcome: 'unchanged' };
  try {
    const result = await statusWrite.writeNodeStatusChanges({
      nodeName: input.nodeName,
      eniChanges: jsonDelta(input.current.networkInterfaces ?? {}, status.networkInterfaces ?? {}, {
        maxDepth: STATUS_CHANGE_DEPTH,
      }),
      ...(status.lastSyncOpenAPITime === undefined ? {} : { lastSyncOpenAPITime: status.lastSyncOpenAPITime }),
      ...(status.nextSyncOpenAPITime === undefined ? {} : { nextSyncOpenAPITime: status.nextSyncOpenAPITime }),
      ...(pool === undefined ? {} : { pool }),
    });
    if (result.outcome === 'gone') return { outcome: 'gone' };
    return { outcome: 'written', resourceVersion: 'resourceVersion' in result ? result.resourceVersion : '' };
  } catch (error) {
    return { outcome: 'failed', failed: { operation: 'writeNodeStatus', failure: failureOf(error) } };
  }
}

/** Lets a deleted Node CR go once its ENIs are released. */
export async function removeNodeFinalizer(nodeName: string): Promise<StepFailure | undefined> {
  try {
    await kubeRead.removeNodeFinalizer({ nodeName });
    return undefined;
  } catch (error) {
    return { operation: 'removeNodeFinalizer', failure: failureOf(error) };
  }
}

/**
 * The node's vSwitches, from the worker's cache mostly: as the pass's read brought them when it has every one
 * (no activity), else `describeVSwitches` (a local activity, which may ask the cloud); `refresh` always asks the
 * cloud again.
 */
export async function readVSwitches(input: {
  spec: ReadyNodeSpec;
  enis: NetworkInterfaces;
  refresh: boolean;
  /** What the read brought; its `ids` are set to this lookup's, for the next read. */
  peek?: VSwitchPeek | undefined;
}): Promise<Record<string, VSwitchInfo>> {
  const { enis } = input;
  const vSwitchIds = [
    ...new Set([
      ...(input.spec.eni.vSwitchOptions ?? []),
      ...sortedKeys(enis).flatMap((id) => enis[id]?.vSwitchID ?? []),
    ]),
  ].sort();
  const { peek } = input;
  const found = peek?.found;
  if (peek !== undefined) {
    peek.ids = vSwitchIds;
    // Once only: a later lookup in the same pass (none today) would ask again.
    delete peek.found;
  }
  if (!input.refresh && found !== undefined && vSwitchIds.every((id) => found[id] !== undefined)) {
    return Object.fromEntries(vSwitchIds.flatMap((id) => (found[id] === undefined ? [] : [[id, found[id]]])));
  }
  return ecsReadLocal.describeVSwitches({ vSwitchIds, ...(input.refresh ? { refresh: true } : {}) });
}

/** The status a ready pass writes: the ENIs, and the OpenAPI sync times when the pass knows them. */
export function statusWithSyncTimes(
  enis: NetworkInterfaces,
  times: { lastSyncMs?: number | undefined; nextSyncMs?: number | undefined },
): NodeStatus {
  const status: NodeStatus = { networkInterfaces: enis };
  if (times.lastSyncMs !== undefined) status.lastSyncOpenAPITime = formatRfc3339(times.lastSyncMs);
  if (times.nextSyncMs !== undefined) status.nextSyncOpenAPITime = formatRfc3339(times.nextSyncMs);
  return status;
}

/** What a pass writes: its status, the status it read, its ENIs, and (a ready pass) the pool fields. */
export interface StatusWrite {
  status: NodeStatus;
  current: NodeStatus;
  enis: NetworkInterfaces;
  pool?: PoolStatusFields | undefined;
}

/**
 * Writes the status when it changed, and keeps the carried state true to the outcome: a write that landed is
 * remembered (the next read must see it), a write refused for good keeps the ENIs in the workflow (carried across
 * continue-as-new) and the caller asks for an OpenAPI resync, so nothing done to the cloud is forgotten.
 */
export async function writeStatusKeepingEnis(
  input: StatusWrite & { nodeName: string; state: CarriedState; record: PassRecord },
): Promise<'written' | 'failed' | 'gone'> {
  const { state } = input;
  const result = await writeStatusIfChanged({
    nodeName: input.nodeName,
    status: input.status,
    current: input.current,
    force: state.unwrittenEnis !== undefined,
    pool: input.pool,
  });
  if (result.outcome === 'failed') {
    input.record.record(result.failed, { ledger: true });
    state.unwrittenEnis = input.enis;
    delete state.ownStatus;
    return 'failed';
  }
  if (result.outcome === 'written' && result.resourceVersion !== '') {
    // The next read must see this write: a cache that has not yet would plan on the status before it.
    noteSeenVersions(state, { 'node-crs': result.resourceVersion });
  }
  const lastSync = input.status.lastSyncOpenAPITime;
  if (lastSync === undefined) delete state.ownStatus;
  else
    state.ownStatus = { lastSyncOpenAPITime: lastSync, enis: Object.keys(input.status.networkInterfaces ?? {}).length };
  delete state.unwrittenEnis;
  return result.outcome === 'gone' ? 'gone' : 'written';
}
