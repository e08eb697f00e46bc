import {
  foldEniOutcomes,
  nextIntentStep,
  markPrefixesDeleting,
  recordEniForDeletion,
  releaseIpsOfGonePods,
  sortedKeys,
} from '../../../ipam/index.js';
import type { NetworkInterfaces, NodeCr, NodeStatus, PendingCreate } from '../../../ipam/index.js';
import type { NodeIpamSettings } from '../../messages.js';
import { ecsRead } from '../act/activities.js';
import { setOpenIntents } from '../memory/carried-state.js';
import type { CarriedState } from '../memory/carried-state.js';
import { EniOperator } from '../act/eni-operator.js';
import type { NodeDegradation } from '../memory/degradation.js';
import { removeNodeFinalizer } from '../act/io.js';
import type { NodeNotices } from '../tell/notices.js';
import type { OperationTracker } from '../act/operation-tracker.js';
import type { PassEnd, PassRecord } from '../memory/pass-record.js';
import { failureOf } from '../memory/step-failure.js';
import type { StepFailure } from '../memory/step-failure.js';

/**
 * The open create intents of a node being deleted. An intent whose attempts have all ended is listed by its tag and
 * the ENIs found join the CR as `Deleting`, so the GC below removes them (detaching them from this instance first,
 * never from another); an intent an attempt of which may still reach ECS is kept, and the node waits for it.
 */
async function resolveIntents(input: {
  intents: readonly PendingCreate[];
  enis: NetworkInterfaces;
  nowMs: number;
  horizonMs: number;
}): Promise<{ enis: NetworkInterfaces; left: PendingCreate[]; failed: StepFailure[] }> {
  const listable = input.intents.filter(
    (intent) => nextIntentStep({ intent, nowMs: input.nowMs, horizonMs: input.horizonMs }) === 'list',
  );
  const waiting = input.intents.filter((intent) => !listable.includes(intent));
  const failed: StepFailure[] = waiting.map((intent) => ({
    operation: 'resolveIntent',
    failure: {
      type: 'IntentInFlight',
      message: `create ${intent.request.clientToken} may still reach ECS; the node is released once it cannot`,
    },
  }));
  if (listable.length === 0) return { enis: input.enis, left: waiting, failed };
  let enis = input.enis;
  try {
    const found = await ecsRead.findEnisByIntent({
      clientTokens: listable.map((intent) => intent.request.clientToken),
    });
    for (const eni of Object.values(found).flat()) enis = recordEniForDeletion({ enis, eniId: eni.eniId });
    return { enis, left: waiting, failed };
  } catch (error) {
    failed.push({ operation: 'findEnisByIntent', failure: failureOf(error) });
    return { enis, left: [...listable, ...waiting], failed };
  }
}

/**
 * A Node CR being deleted: every managed ENI is detached and deleted, the emptied status written, and the
 * finalizer removed so the CR can go. Failures are retried by the next pass (with backoff).
 */
export async function releaseDeletedNode(input: {
  node: NodeCr;
  nodeName: string;
  clusterId: string;
  enis: NetworkInterfaces;
  /** Holds the open create intents: resolved before the node is let go. */
  state: CarriedState;
  /** The node's `createAttemptHorizonMs`: an intent is listed only once every attempt of it has ended. */
  horizonMs: number;
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
    if (enis[eniId]?.unschedulable === true) continue;
    // Prefix mode: the daemon's pods on the prefixes are gone too.
    enis = recordEniForDeletion({ enis: markPrefixesDeleting({ enis, eniId }), eniId });
  }
  const intents = await resolveOpenIntents({ ...input, enis });
  const gc = await removeEnis({ ...input, instanceId: node.spec.nodeMetadata?.instanceID ?? '', enis: intents.enis });
  enis = gc.enis;
  const written = await input.writeStatus({ status: { networkInterfaces: enis }, current: node.status ?? {}, enis });
  if (gc.failed || intents.failed || !written) return 'failed';
  if (input.isGone()) return 'gone';
  const finalizerFailure = await removeNodeFinalizer(input.nodeName);
  if (finalizerFailure !== undefined) {
    input.record.record(finalizerFailure, { ledger: true });
    return 'failed';
  }
  return 'released';
}

/**
 * A Node CR gone without passing through {@link releaseDeletedNode}: deleted while it had no finalizer (eniflow does
 * not add one: Terway's node controller does), or the finalizer removed by hand. No pass will list its ENIs again,
 * so the ENIs eniflow made for this node of this cluster, found by their tags wherever they are, are detached from
 * the node's instance and deleted, once every open create intent has ended. ENIs not provably made for this node
 * (adopted ones, another cluster's) are left alone, as the deletion path's ownership check leaves them.
 */
export async function releaseVanishedNode(input: {
  nodeName: string;
  clusterId: string;
  /** The instance as the last ready pass read it ('' when unknown: then no attached ENI is detached). */
  instanceId: string;
  state: CarriedState;
  horizonMs: number;
  tracker: OperationTracker;
  record: PassRecord;
}): Promise<'released' | 'failed'> {
  const intents = await resolveOpenIntents({ ...input, enis: {} });
  let { enis } = intents;
  try {
    const made = await ecsRead.listEniflowEnis({ clusterId: input.clusterId, nodeName: input.nodeName });
    for (const eni of made) enis = recordEniForDeletion({ enis, eniId: eni.eniId });
  } catch (error) {
    input.record.record({ operation: 'listNodeEnis', failure: failureOf(error) }, { ledger: true });
    return 'failed';
  }
  const gc = await removeEnis({ ...input, enis });
  return gc.failed || intents.failed ? 'failed' : 'released';
}

/** The node's open create intents resolved (see `resolveIntents`): the carried state and the ledger told. */
async function resolveOpenIntents(input: {
  state: CarriedState;
  enis: NetworkInterfaces;
  horizonMs: number;
  record: PassRecord;
}): Promise<{ enis: NetworkInterfaces; failed: boolean }> {
  const intents = await resolveIntents({
    intents: input.state.pendingCreates ?? [],
    enis: input.enis,
    nowMs: Date.now(),
    horizonMs: input.horizonMs,
  });
  setOpenIntents(input.state, intents.left);
  for (const failed of intents.failed) input.record.record(failed, { ledger: true });
  return { enis: intents.enis, failed: intents.failed.length > 0 };
}

/** The GC of a node going away (every ENI recorded `Deleting`), folded in plan order and told to the ledger. */
async function removeEnis(input: {
  nodeName: string;
  clusterId: string;
  instanceId: string;
  tracker: OperationTracker;
  record: PassRecord;
  enis: NetworkInterfaces;
}): Promise<{ enis: NetworkInterfaces; failed: boolean }> {
  const operator = new EniOperator({
    nodeName: input.nodeName,
    instanceId: input.instanceId,
    clusterId: input.clusterId,
    tracker: input.tracker,
  });
  const gc = await operator.collectGarbage(input.enis);
  input.record.foldReports(gc.reports);
  const enis = foldEniOutcomes(
    input.enis,
    gc.reports.flatMap((report) => report.outcomes),
  );
  return { enis, failed: gc.result.failed.length > 0 };
}

/** How a pass of a node going away ended: the pass's end, what the node shows, and whether the workflow may end. */
export interface Departure {
  end: PassEnd;
  ipamState: 'Deleting' | 'Gone';
  /** Why the pass stopped before acting: releases held back, or the CR gone and its ENIs released. */
  skipReason?: string;
  /** Everything eniflow made for the node is released: the workflow ends. */
  released: boolean;
}

/**
 * A node going away: its CR being deleted ({@link releaseDeletedNode}) or gone ({@link releaseVanishedNode}). While
 * the degradation holds releases back, it waits for the lift (its Event says so).
 */
export class NodeDeparture {
  private readonly input: {
    nodeName: string;
    settings: Pick<NodeIpamSettings, 'clusterId' | 'createAttemptHorizonMs'>;
    state: CarriedState;
    tracker: OperationTracker;
    record: PassRecord;
    degradation: NodeDegradation;
    notices: NodeNotices;
  };

  constructor(input: NodeDeparture['input']) {
    this.input = input;
  }

  /** The CR is being deleted: open intents resolved, its ENIs released, then the finalizer lets it go. */
  async deleted(input: {
    node: NodeCr;
    enis: NetworkInterfaces;
    writeStatus: (write: { status: NodeStatus; current: NodeStatus; enis: NetworkInterfaces }) => Promise<boolean>;
    isGone: () => boolean;
  }): Promise<Departure | 'gone'> {
    const held = await this.heldBack();
    if (held !== undefined) return held;
    const { nodeName, settings, state, tracker, record } = this.input;
    const result = await releaseDeletedNode({
      ...input,
      nodeName,
      clusterId: settings.clusterId,
      state,
      horizonMs: settings.createAttemptHorizonMs,
      tracker,
      record,
    });
    if (result === 'gone') return 'gone';
    const released = result === 'released';
    return {
      end: { failed: result === 'failed', scope: 'completed' },
      ipamState: released ? 'Gone' : 'Deleting',
      released,
    };
  }

  /** The CR is gone without the deletion path (no finalizer held it): see {@link releaseVanishedNode}. */
  async vanished(): Promise<Departure> {
    const held = await this.heldBack();
    if (held !== undefined) return held;
    const { nodeName, settings, state, tracker, record } = this.input;
    const result = await releaseVanishedNode({
      nodeName,
      clusterId: settings.clusterId,
      instanceId: state.instanceId ?? '',
      state,
      horizonMs: settings.createAttemptHorizonMs,
      tracker,
      record,
    });
    if (result === 'failed') {
      return { end: { failed: true, scope: 'completed' }, ipamState: 'Deleting', released: false };
    }
    const skipReason = 'the Node CR does not exist';
    return { end: { failed: false, scope: 'stoppedBeforeCloud' }, ipamState: 'Gone', skipReason, released: true };
  }

  private async heldBack(): Promise<Departure | undefined> {
    const { degradation } = this.input;
    if (degradation.gates().release) return undefined;
    await this.input.notices.degradationChanged(degradation.owedNotice(['release']));
    const skipReason = `the node's ENIs are released once lifted: ${degradation.view()?.summary ?? ''}`;
    return { end: { failed: false, scope: 'stoppedBeforeCloud' }, ipamState: 'Deleting', skipReason, released: false };
  }
}
