import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { buildCreateRequest, noteFailure } from '../../../src/ipam/index.js';
import {
  CARRIED_STATE_VERSION,
  carriedStateProblem,
  carryState,
  newCarriedState,
} from '../../../src/workflows/node/memory/carried-state.js';
import type { CarriedState } from '../../../src/workflows/node/memory/carried-state.js';
import {
  blockedVSwitchesOf,
  buildNodeView,
  gcDeferral,
  initialPassSummary,
  stuckOnOf,
} from '../../../src/workflows/node/tell/state-view.js';
import { settlePrefixMode } from '../../../src/workflows/node/pass/prefix-mode.js';

const T0 = Date.UTC(2026, 11, 3, 10, 0, 0);

describe('carried state', () => {
  /** A version 1 state with every optional field set, as a busy node's run hands it on. */
  const full: CarriedState = {
    ...newCarriedState(),
    firstSyncDue: false,
    needResync: true,
    reconcileCount: 7,
    lastGcMs: T0,
    pendingSince: { 'default/a': T0 },
    daemonWait: { sinceMs: T0, reported: true },
    pendingCreates: [
      {
        request: buildCreateRequest({
          allocation: { kind: 'createEni', eniKind: 'trunk', vSwitchId: 'vsw-2', ipv4Count: 1, ipv6Count: 0 },
          spec: {},
          nodeName: 'node-a',
          clusterId: 'c-1',
          clientToken: 'tok-1',
        }),
        sinceMs: T0,
        lastAttemptMs: T0,
        listOnly: true,
      },
    ],
    seenVersions: { nodes: '12' },
    prefixMode: false,
    degradation: { level: 'l1', revision: '3' },
    degradationTold: 'l1',
    instanceId: 'i-1',
    ownStatus: { lastSyncOpenAPITime: '2026-12-03T10:00:00Z', enis: 2 },
  };

  it('starts at version 1, takes a version 1 state and hands it on unchanged', () => {
    assert.equal(CARRIED_STATE_VERSION, 1);
    assert.equal(newCarriedState().version, 1);
    assert.equal(carriedStateProblem(newCarriedState()), undefined);
    assert.equal(carriedStateProblem(full), undefined);
    assert.deepEqual(carryState(full), full);
    // JSON is how Temporal hands it on: what the next run gets is what this one had.
    assert.deepEqual(JSON.parse(JSON.stringify(carryState(full))), full);
  });

  const versions: { name: string; version: unknown; got: string }[] = [
    { name: 'a newer release’s (a rollback)', version: 2, got: 'carried state has version 2;' },
    { name: 'a pre-release one', version: 5, got: 'carried state has version 5;' },
    { name: 'none', version: undefined, got: 'carried state has no version;' },
    { name: 'a string', version: '1', got: 'carried state has version "1";' },
  ];
  for (const row of versions) {
    it(`refuses another version: ${row.name}, naming the one it got and the one it takes`, () => {
      const state: Record<string, unknown> = { ...newCarriedState(), version: row.version };
      if (row.version === undefined) delete state['version'];
      const problem = carriedStateProblem(state) ?? '';
      assert.ok(problem.startsWith(row.got), problem);
      assert.ok(problem.includes('this release takes carried state version 1 only'), problem);
    });
  }

  it('refuses a malformed state, naming what is wrong', () => {
    for (const carried of [null, [], 'state', 1]) {
      assert.match(carriedStateProblem(carried) ?? '', /^carried state is not an object; this release takes .* 1 only/);
    }
    const broken: Record<string, unknown> = { ...newCarriedState(), needResync: 'no', eventTimes: [] };
    delete broken['lastErrors'];
    assert.match(
      carriedStateProblem(broken) ?? '',
      /^carried state version 1 is malformed \(needResync, lastErrors, eventTimes\); this release takes/,
    );
    assert.match(carriedStateProblem({ ...newCarriedState(), reconcileCount: Number.NaN }) ?? '', /\(reconcileCount\)/);
  });

  it('a first run records the prefix mode from the spec of its first ready pass, then keeps it', () => {
    const state = newCarriedState();
    assert.equal(state.prefixMode, undefined);
    assert.deepEqual(settlePrefixMode({ state, spec: { eni: { enableIPPrefix: false } } }), { prefixMode: false });
    // A later spec asking otherwise is refused, not followed.
    assert.deepEqual(settlePrefixMode({ state, spec: { eni: { enableIPPrefix: true } } }), {
      prefixMode: false,
      ignoredChange: true,
    });
    assert.equal(carryState(state).prefixMode, false);
  });

  it('hands on a copy: later changes to the run’s state do not reach the carried one', () => {
    const state = newCarriedState();
    const carried = carryState(state);
    state.eventTimes['k'] = 1;
    state.lastErrors.push({ atMs: 1, operation: 'o', type: 't', message: 'm' });
    assert.deepEqual(carried.eventTimes, {});
    assert.deepEqual(carried.lastErrors, []);
  });
});

describe('the node view', () => {
  const failing = noteFailure({
    ledger: {},
    failure: {
      operation: 'CreateNetworkInterface',
      code: 'Forbidden.RAM',
      type: 'EcsInvalidRequest',
      attempts: 1,
      message: 'no permission',
    },
    nowMs: T0,
  });

  it('shows the ledger’s headline as stuckOn, and nothing once the ledger is empty', () => {
    assert.deepEqual(stuckOnOf({ failures: failing }), {
      code: 'Forbidden.RAM',
      since: new Date(T0).toISOString(),
      operation: 'CreateNetworkInterface',
      message: 'no permission',
    });
    assert.equal(stuckOnOf({}), undefined);
  });

  it('builds the query view from the last pass, the carried state and the next pass', () => {
    const state: CarriedState = { ...newCarriedState(), failures: failing, failureStreak: 2, pendingSince: { a: T0 } };
    const view = buildNodeView({
      nodeName: 'n1',
      summary: { ...initialPassSummary(), ipamState: 'Error', lastPassEndMs: T0 + 5_000 },
      state,
      pendingOperations: [
        { kind: 'createEni', action: 'CreateNetworkInterface', startedAtMs: T0, detail: 'secondary in vsw-a' },
      ],
      nextPass: { atMs: T0 + 7_000, reason: 'failureBackoff' },
      ignoredSignals: [{ name: 'gcc', at: 'x' }],
    });
    assert.equal(view.ipamState, 'Error');
    assert.equal(view.stuckOn?.code, 'Forbidden.RAM');
    assert.deepEqual(view.nextPass, {
      at: new Date(T0 + 7_000).toISOString(),
      reason: 'retry after 2 failed pass(es) (backoff)',
    });
    assert.equal(view.oldestPendingSince, new Date(T0).toISOString());
    assert.equal(view.pendingOperations[0]?.startedAt, new Date(T0).toISOString());
    assert.equal(view.failingOperations?.[0]?.code, 'Forbidden.RAM');
    assert.deepEqual(view.ignoredSignals, [{ name: 'gcc', at: 'x' }]);
  });

  it('answers a gc update at once while the node backs off, naming the cause and since when', () => {
    const view = buildNodeView({
      nodeName: 'n1',
      summary: initialPassSummary(),
      state: { ...newCarriedState(), failures: failing, failureStreak: 3 },
      pendingOperations: [],
      nextPass: undefined,
      ignoredSignals: [],
    });
    assert.equal(
      gcDeferral(view)?.deferred,
      `GC deferred: node in failure backoff since ${new Date(T0).toISOString()} on Forbidden.RAM ` +
        '(CreateNetworkInterface) after 3 failed pass(es); it runs with the next pass',
    );
    assert.equal(gcDeferral({ ...view, failedPasses: 0 }), undefined);
  });

  it('lists the blocked vSwitches in id order', () => {
    assert.deepEqual(
      blockedVSwitchesOf({
        'vsw-b': { vSwitchId: 'vsw-b', zoneId: 'z', availableIpCount: 0, ipv4Cidr: '', blockedForMs: 5 },
        'vsw-a': { vSwitchId: 'vsw-a', zoneId: 'z', availableIpCount: 9, ipv4Cidr: '' },
        'vsw-0': { vSwitchId: 'vsw-0', zoneId: 'z', availableIpCount: 0, ipv4Cidr: '', blockedForMs: 9 },
      }),
      [
        { vSwitchId: 'vsw-0', blockedForMs: 9 },
        { vSwitchId: 'vsw-b', blockedForMs: 5 },
      ],
    );
  });
});
