import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { buildCreateRequest, ENIFLOW_INTENT_TAG, noteFailure } from '../../../src/ipam/index.js';
import {
  CARRIED_STATE_VERSION,
  carryState,
  completeLegacyIntents,
  newCarriedState,
  upgradeCarriedState,
} from '../../../src/workflows/node/carried-state.js';
import type { CarriedState } from '../../../src/workflows/node/carried-state.js';
import {
  blockedVSwitchesOf,
  buildNodeView,
  gcDeferral,
  initialPassSummary,
  stuckOnOf,
} from '../../../src/workflows/node/node-view.js';
import { settlePrefixMode } from '../../../src/workflows/node/prefix-pass.js';

const T0 = Date.UTC(2026, 11, 3, 10, 0, 0);

describe('carried state', () => {
  it('brings version 4 forward unchanged: the prefix mode is recorded from the spec of the next pass', () => {
    const v4 = { ...newCarriedState(), version: 4, reconcileCount: 7, lastGcMs: T0 } as CarriedState;
    const upgraded = upgradeCarriedState(v4);
    assert.deepEqual(upgraded, { ...v4, version: CARRIED_STATE_VERSION });
    assert.equal(CARRIED_STATE_VERSION, 5);
    assert.equal(upgraded.prefixMode, undefined);
    assert.equal(upgraded.degradation, undefined);
    // The first ready pass records the mode; a later spec asking otherwise is refused, not followed.
    assert.deepEqual(settlePrefixMode({ state: upgraded, spec: { eni: { enableIPPrefix: false } } }), {
      prefixMode: false,
    });
    assert.deepEqual(settlePrefixMode({ state: upgraded, spec: { eni: { enableIPPrefix: true } } }), {
      prefixMode: false,
      ignoredChange: true,
    });
    assert.equal(carryState(upgraded).prefixMode, false);
  });

  it('brings version 2 forward: failing operations become the failure ledger', () => {
    const v2 = {
      ...newCarriedState(),
      version: 2,
      failingOperations: {
        'AttachNetworkInterface/ServiceUnavailable': {
          operation: 'AttachNetworkInterface',
          code: 'ServiceUnavailable',
          type: 'EcsTransient',
          attempts: 3,
          sinceMs: T0,
          lastMs: T0 + 1,
        },
      },
    } as CarriedState;
    const upgraded = upgradeCarriedState(v2);
    assert.equal(upgraded.version, CARRIED_STATE_VERSION);
    assert.equal('failingOperations' in upgraded, false);
    assert.deepEqual(upgraded.failures?.['AttachNetworkInterface/ServiceUnavailable']?.sinceMs, T0);
    assert.equal(upgraded.failures?.['AttachNetworkInterface/ServiceUnavailable']?.message, '');
  });

  it('brings version 3 intents forward untouched, to be completed from the spec by the next pass', () => {
    const v3Intent = {
      clientToken: 'tok-v3',
      eniKind: 'secondary',
      vSwitchId: 'vsw-1',
      ipv4Count: 3,
      ipv6Count: 1,
      sinceMs: T0,
    };
    const current = {
      request: buildCreateRequest({
        allocation: { kind: 'createEni', eniKind: 'trunk', vSwitchId: 'vsw-2', ipv4Count: 1, ipv6Count: 0 },
        spec: {},
        nodeName: 'node-a',
        clientToken: 'tok-v4',
      }),
      sinceMs: T0,
      lastAttemptMs: T0,
    };
    const v3 = { ...newCarriedState(), version: 3, pendingCreates: [v3Intent, current] } as unknown as CarriedState;
    const upgraded = upgradeCarriedState(v3);
    assert.equal(upgraded.version, CARRIED_STATE_VERSION);
    assert.deepEqual(upgraded.legacyPendingCreates, [v3Intent]);
    assert.deepEqual(upgraded.pendingCreates, [current]);
    // A state with only v3 intents leaves no empty list behind; upgrading twice changes nothing.
    const only = upgradeCarriedState({ ...v3, pendingCreates: [v3Intent] } as unknown as CarriedState);
    assert.equal('pendingCreates' in only, false);
    assert.deepEqual(upgradeCarriedState(only), only);
    const none = upgradeCarriedState({ ...newCarriedState(), version: 3 });
    assert.equal('legacyPendingCreates' in none, false);
  });

  it('completes a version 3 intent from the spec: the request version 3 sent, marked untagged', () => {
    const [completed] = completeLegacyIntents({
      legacy: [
        { clientToken: 'tok-v3', eniKind: 'erdma', vSwitchId: 'vsw-1', ipv4Count: 3, ipv6Count: 1, sinceMs: T0 },
      ],
      spec: { eni: { securityGroupIDs: ['sg-b', 'sg-a'], resourceGroupID: 'rg', tag: { team: 'net' } } },
      nodeName: 'node-a',
    });
    assert.deepEqual(completed, {
      request: {
        eniKind: 'erdma',
        eniType: 'Secondary',
        trafficMode: 'HighPerformance',
        vSwitchId: 'vsw-1',
        securityGroupIds: ['sg-b', 'sg-a'],
        resourceGroupId: 'rg',
        ipv4Count: 3,
        ipv6Count: 1,
        // Version 3 sent the spec's tags and the node tag (the activity added the creator tag), never an intent tag.
        tags: { team: 'net', 'eniflow.io/node': 'node-a', creator: 'eniflow' },
        clientToken: 'tok-v3',
      },
      sinceMs: T0,
      lastAttemptMs: T0,
      untagged: true,
    });
    assert.equal(ENIFLOW_INTENT_TAG in (completed?.request.tags ?? {}), false);
  });

  it('keeps a newer release’s version when it hands the state on (a rollback does not relabel it)', () => {
    const newer = { ...newCarriedState(), version: CARRIED_STATE_VERSION + 1 };
    assert.equal(carryState(upgradeCarriedState(newer)).version, CARRIED_STATE_VERSION + 1);
    assert.equal(carryState(upgradeCarriedState({ ...newer, version: 1 })).version, CARRIED_STATE_VERSION);
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
