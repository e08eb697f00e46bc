import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buildCreateRequest,
  CREATE_ATTEMPT_HORIZON_MS,
  createFailureVerdict,
  enisAwaitingAttach,
  ENIFLOW_INTENT_TAG,
  intentAllocation,
  isDefiniteAttachFailure,
  nextIntentStep,
  pairCreatesWithIntents,
  recordEniAwaitingAttach,
  resolveUnlistedEnis,
  withoutEnisAwaitingAttach,
} from '../../../src/ipam/index.js';
import type { EniAllocation, EniKind, NetworkInterfaces, PendingCreate } from '../../../src/ipam/index.js';
import { ACTIVITY_POLICIES } from '../../../src/workflows/activity-policies.js';

const NOW = Date.UTC(2026, 11, 3, 10, 0, 0);

const spec = {
  eni: {
    securityGroupIDs: ['sg-2', 'sg-1'],
    resourceGroupID: 'rg-1',
    tag: { team: 'net', creator: 'someone-else' },
  },
};

function intent(token: string, eniKind: EniKind = 'secondary', extra: Partial<PendingCreate> = {}): PendingCreate {
  return {
    request: buildCreateRequest({
      allocation: { kind: 'createEni', eniKind, vSwitchId: `vsw-${token}`, ipv4Count: 3, ipv6Count: 0 },
      spec,
      nodeName: 'node-a',
      clusterId: 'c-1',
      clientToken: token,
    }),
    sinceMs: NOW,
    lastAttemptMs: NOW,
    ...extra,
  };
}

const create = (eniKind: EniKind, vSwitchId = 'vsw-new'): EniAllocation => ({
  kind: 'createEni',
  eniKind,
  vSwitchId,
  ipv4Count: 5,
  ipv6Count: 0,
});
const assign: EniAllocation = { kind: 'assignIps', eniId: 'eni-1', ipv4Count: 2, ipv6Count: 0 };

describe('the create request', () => {
  it('records every parameter as sent: kind as type and traffic mode, groups, resource group, the full tag map', () => {
    const request = buildCreateRequest({
      allocation: { kind: 'createEni', eniKind: 'erdma', vSwitchId: 'vsw-1', ipv4Count: 4, ipv6Count: 2 },
      spec,
      nodeName: 'node-a',
      clusterId: 'c-1',
      clientToken: 'tok-1',
    });
    assert.deepEqual(request, {
      eniKind: 'erdma',
      eniType: 'Secondary',
      trafficMode: 'HighPerformance',
      vSwitchId: 'vsw-1',
      securityGroupIds: ['sg-2', 'sg-1'],
      resourceGroupId: 'rg-1',
      ipv4Count: 4,
      ipv6Count: 2,
      // eniflow's own tags win over the spec's (the creator tag is eniflow's).
      tags: {
        team: 'net',
        creator: 'eniflow',
        'eniflow.io/node': 'node-a',
        'eniflow.io/cluster-id': 'c-1',
        [ENIFLOW_INTENT_TAG]: 'tok-1',
      },
      clientToken: 'tok-1',
    });
    assert.equal(request.tags[ENIFLOW_INTENT_TAG], request.clientToken, 'the ENI carries its token as a tag');
  });

  it('is a copy: a later spec change does not reach a recorded request', () => {
    const mutable = { eni: { securityGroupIDs: ['sg-1'], tag: { a: '1' } } };
    const request = buildCreateRequest({
      allocation: create('trunk') as never,
      spec: mutable,
      nodeName: 'n',
      clusterId: 'c-1',
      clientToken: 't',
    });
    mutable.eni.securityGroupIDs.push('sg-9');
    mutable.eni.tag.a = '2';
    assert.deepEqual(request.securityGroupIds, ['sg-1']);
    assert.equal(request.tags['a'], '1');
    assert.equal(request.eniType, 'Trunk');
    assert.equal('resourceGroupId' in request, false, 'no resource group when the spec has none');
  });
});

describe('what a failed create proves (createFailureVerdict)', () => {
  const table: { name: string; type: string; code?: string; attempt?: number; reissued: boolean; verdict: string }[] = [
    // Refusals on the token's one and only use: ECS created nothing.
    {
      name: 'exhausted, first use',
      type: 'EcsVSwitchExhausted',
      code: 'InvalidVSwitchId.IpNotEnough',
      attempt: 1,
      reissued: false,
      verdict: 'closed',
    },
    {
      name: 'quota, first use',
      type: 'EcsQuotaExceeded',
      code: 'MaxEniCountExceeded',
      attempt: 1,
      reissued: false,
      verdict: 'closed',
    },
    {
      name: 'invalid parameter, first use',
      type: 'EcsInvalidRequest',
      code: 'InvalidParameter',
      attempt: 1,
      reissued: false,
      verdict: 'closed',
    },
    {
      name: 'RAM denial, first use',
      type: 'EcsInvalidRequest',
      code: 'Forbidden.RAM',
      attempt: 1,
      reissued: false,
      verdict: 'closed',
    },
    {
      name: 'security group gone, first use',
      type: 'EcsNotFound',
      code: 'InvalidSecurityGroupId.NotFound',
      attempt: 1,
      reissued: false,
      verdict: 'closed',
    },
    // The same refusals after an earlier attempt: that attempt may have created the ENI (lost answer, still queued).
    {
      name: 'exhausted on the 2nd attempt',
      type: 'EcsVSwitchExhausted',
      code: 'InvalidVSwitchId.IpNotEnough',
      attempt: 2,
      reissued: false,
      verdict: 'listOnly',
    },
    {
      name: 'quota on a re-issue',
      type: 'EcsQuotaExceeded',
      code: 'MaxEniCountExceeded',
      attempt: 1,
      reissued: true,
      verdict: 'listOnly',
    },
    {
      name: 'invalid parameter on a re-issue',
      type: 'EcsInvalidRequest',
      code: 'InvalidParameter',
      attempt: 1,
      reissued: true,
      verdict: 'listOnly',
    },
    {
      name: 'refusal, attempt unknown',
      type: 'EcsInvalidRequest',
      code: 'InvalidParameter',
      reissued: false,
      verdict: 'listOnly',
    },
    // Idempotency answers speak of an earlier use whose outcome is unknown, even on "attempt 1".
    {
      name: 'parameter mismatch',
      type: 'EcsInvalidRequest',
      code: 'IdempotentParameterMismatch',
      attempt: 1,
      reissued: false,
      verdict: 'listOnly',
    },
    {
      name: 'IdempotentFailed',
      type: 'EcsInvalidRequest',
      code: 'IdempotentFailed',
      attempt: 1,
      reissued: true,
      verdict: 'listOnly',
    },
    {
      name: 'idempotence mismatch (403 form)',
      type: 'EcsInvalidRequest',
      code: 'InvalidIdempotenceParameter.Mismatch',
      attempt: 2,
      reissued: false,
      verdict: 'listOnly',
    },
    // Everything else leaves the outcome open: the same request may still tell.
    { name: '503', type: 'EcsTransient', code: 'ServiceUnavailable', attempt: 2, reissued: false, verdict: 'reissue' },
    {
      name: 'throttled',
      type: 'EcsThrottled',
      code: 'Throttling.User',
      attempt: 1,
      reissued: false,
      verdict: 'reissue',
    },
    {
      name: 'token still processing',
      type: 'EcsTransient',
      code: 'IdempotentProcessing',
      attempt: 2,
      reissued: true,
      verdict: 'reissue',
    },
    { name: 'activity timed out (no ECS answer)', type: 'Unknown', reissued: false, verdict: 'reissue' },
    { name: 'unknown code', type: 'EcsUnknown', code: 'SomethingNew', attempt: 1, reissued: false, verdict: 'reissue' },
  ];
  for (const row of table) {
    it(row.name, () => {
      assert.equal(
        createFailureVerdict({ type: row.type, code: row.code, attempt: row.attempt, reissued: row.reissued }),
        row.verdict,
      );
    });
  }
});

describe('the next step of an open intent (nextIntentStep)', () => {
  const ended = NOW + CREATE_ATTEMPT_HORIZON_MS;
  const table: { name: string; extra: Partial<PendingCreate>; nowMs: number; step: string }[] = [
    { name: 'attempts may be in flight: re-issue', extra: {}, nowMs: NOW + 1_000, step: 'reissue' },
    { name: 'every attempt has ended: list by tag', extra: {}, nowMs: ended, step: 'list' },
    { name: 'list-only, attempts in flight: wait', extra: { listOnly: true }, nowMs: ended - 1, step: 'wait' },
    { name: 'list-only, attempts ended: list', extra: { listOnly: true }, nowMs: ended, step: 'list' },
  ];
  for (const row of table) {
    it(row.name, () => {
      assert.equal(
        nextIntentStep({
          intent: intent('t', 'secondary', row.extra),
          nowMs: row.nowMs,
          horizonMs: CREATE_ATTEMPT_HORIZON_MS,
        }),
        row.step,
      );
    });
  }

  it('the horizon covers the create activity’s start-to-close timeout', () => {
    const timeout = ACTIVITY_POLICIES.createEni.startToCloseTimeout;
    const match = /^(\d+) seconds$/.exec(timeout);
    assert.ok(match !== null, `unexpected timeout format ${timeout}`);
    assert.ok(CREATE_ATTEMPT_HORIZON_MS >= Number(match[1]) * 1000);
  });
});

describe('definite attach failures', () => {
  const table: [string, boolean][] = [
    ['EniAttachFailed', true],
    ['EcsInvalidRequest', true],
    ['EcsNotFound', true],
    ['EcsQuotaExceeded', true],
    ['EcsTransient', false],
    ['EcsThrottled', false],
    ['EcsInvalidState', false],
    ['EcsUnknown', false],
    ['Unknown', false],
  ];
  for (const [type, definite] of table) {
    it(`${type} → ${definite ? 'compensate' : 'keep the ENI'}`, () => {
      assert.equal(isDefiniteAttachFailure(type), definite);
    });
  }
});

describe('pairing planned creates with open intents and ENIs awaiting attach', () => {
  it('re-issues an intent with exactly its first parameters', () => {
    assert.deepEqual(intentAllocation(intent('t1')), {
      kind: 'createEni',
      eniKind: 'secondary',
      vSwitchId: 'vsw-t1',
      ipv4Count: 3,
      ipv6Count: 0,
    });
  });

  it('an intent stands in for a planned create of its kind; the rest run on their own after the plan', () => {
    const { allocations } = pairCreatesWithIntents({
      allocations: [assign, create('erdma'), create('secondary')],
      intents: [intent('t1'), intent('t2'), intent('t3', 'erdma')],
    });
    assert.deepEqual(
      allocations.map((allocation) =>
        allocation.kind === 'assignIps'
          ? 'assign'
          : allocation.intent !== undefined
            ? `${allocation.eniKind}:${allocation.intent.request.clientToken}:${allocation.vSwitchId}:${allocation.planned === undefined ? 'alone' : 'planned'}`
            : `${allocation.eniKind}:new`,
      ),
      ['assign', 'erdma:t3:vsw-t3:planned', 'secondary:t1:vsw-t1:planned', 'secondary:t2:vsw-t2:alone'],
    );
  });

  it('an ENI awaiting attach is taken before an intent; one no create takes is released only without demand', () => {
    const awaiting = [
      { eniId: 'eni-a', eniKind: 'secondary' as const },
      { eniId: 'eni-b', eniKind: 'secondary' as const },
      { eniId: 'eni-c', eniKind: 'erdma' as const },
    ];
    const paired = pairCreatesWithIntents({
      allocations: [create('secondary')],
      intents: [intent('t1')],
      awaiting,
      demand: { normal: 3, erdma: 0 },
    });
    assert.deepEqual(
      paired.allocations.map((allocation) =>
        allocation.kind === 'createEni' ? (allocation.awaitingEniId ?? allocation.intent?.request.clientToken) : '',
      ),
      ['eni-a', 't1'],
    );
    // eni-b: its pool still wants addresses (kept for a later pass); eni-c: no ERDMA demand (released).
    assert.deepEqual(paired.unneeded, ['eni-c']);
    const idle = pairCreatesWithIntents({ allocations: [], intents: [], awaiting, demand: { normal: 0, erdma: 0 } });
    assert.deepEqual(idle.unneeded, ['eni-a', 'eni-b', 'eni-c']);
  });

  it('with no intents and no awaiting ENI the plan is unchanged', () => {
    const allocations = [assign, create('secondary')];
    assert.deepEqual(pairCreatesWithIntents({ allocations, intents: [] }), { allocations, unneeded: [] });
  });
});

describe('ENIs awaiting attach', () => {
  const enis: NetworkInterfaces = {
    'eni-inuse': { id: 'eni-inuse', status: 'InUse', networkInterfaceType: 'Secondary' },
    'eni-wait': {
      id: 'eni-wait',
      status: 'Available',
      networkInterfaceType: 'Secondary',
      networkInterfaceTrafficMode: 'Standard',
    },
    'eni-rdma': {
      id: 'eni-rdma',
      status: 'Available',
      networkInterfaceType: 'Secondary',
      networkInterfaceTrafficMode: 'HighPerformance',
    },
    'eni-blocked': { id: 'eni-blocked', status: 'Available', networkInterfaceType: 'Secondary', unschedulable: true },
    'eni-member': { id: 'eni-member', status: 'Available', networkInterfaceType: 'Member' },
    'eni-bound': {
      id: 'eni-bound',
      status: 'Available',
      networkInterfaceType: 'Secondary',
      ipv4: { '10.0.0.9': { ip: '10.0.0.9', primary: false, status: 'Valid', podID: 'ns/p' } },
    },
    'eni-gc': { id: 'eni-gc', status: 'Deleting', networkInterfaceType: 'Secondary' },
  };

  it('are the idle, schedulable Available ENIs of a managed kind, in id order', () => {
    assert.deepEqual(enisAwaitingAttach(enis), [
      { eniId: 'eni-rdma', eniKind: 'erdma' },
      { eniId: 'eni-wait', eniKind: 'secondary' },
    ]);
    assert.deepEqual(Object.keys(withoutEnisAwaitingAttach(enis)).sort(), [
      'eni-blocked',
      'eni-bound',
      'eni-gc',
      'eni-inuse',
      'eni-member',
    ]);
  });

  it('the OpenAPI sync keeps one (Available in the cloud too) instead of marking it Deleting', () => {
    const result = resolveUnlistedEnis({
      enis: { 'eni-wait': enis['eni-wait']! },
      unlisted: ['eni-wait'],
      cloud: [
        {
          eniId: 'eni-wait',
          status: 'Available',
          type: 'Secondary',
          trafficMode: 'Standard',
          macAddress: '',
          vSwitchId: 'vsw',
          securityGroupIds: [],
          primaryIp: '10.0.0.2',
          ipv4: [],
          ipv6: [],
          ipv4Prefixes: [],
          ipv6Prefixes: [],
        },
      ],
      instanceId: 'i-1',
      eniSpec: {},
      nowRfc3339: '2026-12-03T10:00:00Z',
      clusterId: 'c-test',
    });
    assert.equal(result.enis['eni-wait']?.status, 'Available');
    assert.deepEqual(result.reports, []);
  });
});

describe('recording an ENI awaiting attach', () => {
  it('records it as the cloud has it, Available, with the reason as its OperationErr condition', () => {
    const enis = recordEniAwaitingAttach({
      enis: {},
      cloud: {
        eniId: 'eni-1',
        status: 'Attaching',
        type: 'Secondary',
        trafficMode: 'Standard',
        macAddress: 'm',
        vSwitchId: 'vsw',
        securityGroupIds: ['sg-1'],
        primaryIp: '10.0.0.2',
        ipv4: [{ ip: '10.0.0.2', primary: true }],
        ipv6: [],
        ipv4Prefixes: [],
        ipv6Prefixes: [],
      },
      cidrs: { ipv4Cidr: '10.0.0.0/24' },
      message: 'attach failed',
      nowRfc3339: '2026-12-03T10:00:00Z',
    });
    assert.equal(enis['eni-1']?.status, 'Available');
    assert.equal(enis['eni-1']?.ipv4CIDR, '10.0.0.0/24');
    assert.deepEqual(enis['eni-1']?.conditions, {
      OperationErr: { observedTime: '2026-12-03T10:00:00Z', message: 'attach failed' },
    });
    assert.deepEqual(enisAwaitingAttach(enis), [{ eniId: 'eni-1', eniKind: 'secondary' }]);
  });
});
