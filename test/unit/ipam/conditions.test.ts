import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  chooseVSwitch,
  eniConditionsAfterAllocation,
  formatRfc3339,
  sufficientIpCondition,
} from '../../../src/ipam/index.js';
import type { NodeConditionSnapshot, VSwitchSelectPolicy } from '../../../src/ipam/index.js';
import { aVSwitch, vSwitchesOf } from './builders.js';

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const MINUTE = 60_000;
const at = (ms: number): string => formatRfc3339(ms);

describe('eniConditionsAfterAllocation', () => {
  it('clears conditions when the attempt had no errors', () => {
    assert.equal(
      eniConditionsAfterAllocation({
        current: { InsufficientIP: { observedTime: at(NOW), message: 'x' } },
        errors: [],
        nowMs: NOW,
      }),
      undefined,
    );
  });

  it('sets InsufficientIP for an exhausted vSwitch', () => {
    assert.deepEqual(
      eniConditionsAfterAllocation({
        current: undefined,
        errors: [{ kind: 'ipNotEnough', vSwitchId: 'vsw-a' }],
        nowMs: NOW,
      }),
      { InsufficientIP: { observedTime: at(NOW), message: 'vsw-a ip is not enough' } },
    );
  });

  it('keeps a fresh InsufficientIP as it is and refreshes one older than five minutes', () => {
    const fresh = { InsufficientIP: { observedTime: at(NOW - 4 * MINUTE), message: 'vsw-a ip is not enough' } };
    assert.deepEqual(
      eniConditionsAfterAllocation({
        current: fresh,
        errors: [{ kind: 'ipNotEnough', vSwitchId: 'vsw-a' }],
        nowMs: NOW,
      }),
      fresh,
    );
    const stale = { InsufficientIP: { observedTime: at(NOW - 6 * MINUTE), message: 'vsw-a ip is not enough' } };
    assert.deepEqual(
      eniConditionsAfterAllocation({
        current: stale,
        errors: [{ kind: 'ipNotEnough', vSwitchId: 'vsw-a' }],
        nowMs: NOW,
      }),
      { InsufficientIP: { observedTime: at(NOW), message: 'vsw-a ip is not enough' } },
    );
  });

  it('sets OperationErr with the joined messages cut to 256 characters, keeping InsufficientIP', () => {
    const long = 'x'.repeat(300);
    const result = eniConditionsAfterAllocation({
      current: { InsufficientIP: { observedTime: at(NOW), message: 'vsw-a ip is not enough' } },
      errors: [
        { kind: 'operation', message: 'Throttling.User: slow down' },
        { kind: 'operation', message: long },
      ],
      nowMs: NOW,
    });
    assert.equal(result?.OperationErr?.message.length, 256);
    assert.ok(result?.OperationErr?.message.startsWith('Throttling.User: slow down; xxx'));
    assert.equal(result?.InsufficientIP?.message, 'vsw-a ip is not enough');
  });

  it('keeps an existing OperationErr while only IP-not-enough errors remain', () => {
    const result = eniConditionsAfterAllocation({
      current: { OperationErr: { observedTime: at(NOW - MINUTE), message: 'boom' } },
      errors: [{ kind: 'ipNotEnough', vSwitchId: 'vsw-a' }],
      nowMs: NOW,
    });
    assert.equal(result?.OperationErr?.message, 'boom');
    assert.equal(result?.InsufficientIP?.message, 'vsw-a ip is not enough');
  });

  it('rewrites OperationErr when its message changes', () => {
    const result = eniConditionsAfterAllocation({
      current: { OperationErr: { observedTime: at(NOW - MINUTE), message: 'old' } },
      errors: [{ kind: 'operation', message: 'new' }],
      nowMs: NOW,
    });
    assert.deepEqual(result, { OperationErr: { observedTime: at(NOW), message: 'new' } });
  });
});

describe('sufficientIpCondition', () => {
  const insufficient: NodeConditionSnapshot = {
    type: 'SufficientIP',
    status: 'False',
    reason: 'InsufficientIP',
    message: 'node has insufficient IP',
    lastHeartbeatTime: at(NOW - MINUTE),
    lastTransitionTime: at(NOW - 60 * MINUTE),
  };
  const cases: {
    name: string;
    capacity: { hasIdleIp: boolean; hasAllocatableEni: boolean };
    existing?: NodeConditionSnapshot;
    expected: { status: string; transition: string } | undefined;
  }[] = [
    {
      name: 'an idle IP means sufficient',
      capacity: { hasIdleIp: true, hasAllocatableEni: false },
      expected: { status: 'True', transition: at(NOW) },
    },
    {
      name: 'room for more IPs means sufficient',
      capacity: { hasIdleIp: false, hasAllocatableEni: true },
      expected: { status: 'True', transition: at(NOW) },
    },
    {
      name: 'neither means insufficient',
      capacity: { hasIdleIp: false, hasAllocatableEni: false },
      expected: { status: 'False', transition: at(NOW) },
    },
    {
      name: 'an identical condition written less than five minutes ago is not rewritten',
      capacity: { hasIdleIp: false, hasAllocatableEni: false },
      existing: insufficient,
      expected: undefined,
    },
    {
      name: 'an identical but older condition is refreshed and keeps its transition time',
      capacity: { hasIdleIp: false, hasAllocatableEni: false },
      existing: { ...insufficient, lastHeartbeatTime: at(NOW - 6 * MINUTE) },
      expected: { status: 'False', transition: at(NOW - 60 * MINUTE) },
    },
    {
      name: 'a change of status is a new transition',
      capacity: { hasIdleIp: true, hasAllocatableEni: false },
      existing: insufficient,
      expected: { status: 'True', transition: at(NOW) },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const condition = sufficientIpCondition({ capacity: c.capacity, existing: c.existing, nowMs: NOW });
      if (c.expected === undefined) {
        assert.equal(condition, undefined);
        return;
      }
      assert.equal(condition?.status, c.expected.status);
      assert.equal(condition?.reason, c.expected.status === 'True' ? 'SufficientIP' : 'InsufficientIP');
      assert.equal(condition?.lastTransitionTime, c.expected.transition);
      assert.equal(condition?.lastHeartbeatTime, at(NOW));
    });
  }
});

describe('chooseVSwitch', () => {
  const vSwitches = vSwitchesOf(
    aVSwitch('vsw-a', { availableIpCount: 10 }),
    aVSwitch('vsw-b', { availableIpCount: 50 }),
    aVSwitch('vsw-c', { availableIpCount: 30 }),
    aVSwitch('vsw-empty', { availableIpCount: 0 }),
    aVSwitch('vsw-other-zone', { zoneId: 'zone-b', availableIpCount: 99 }),
  );
  const options = ['vsw-empty', 'vsw-other-zone', 'vsw-unknown', 'vsw-a', 'vsw-b', 'vsw-c'];
  const cases: { policy: VSwitchSelectPolicy | undefined; randomValue: number; expected: string }[] = [
    { policy: 'ordered', randomValue: 0, expected: 'vsw-a' },
    { policy: undefined, randomValue: 0.9, expected: 'vsw-a' },
    { policy: 'most', randomValue: 0, expected: 'vsw-b' },
    { policy: 'random', randomValue: 0, expected: 'vsw-a' },
    { policy: 'random', randomValue: 0.5, expected: 'vsw-b' },
    { policy: 'random', randomValue: 0.99, expected: 'vsw-c' },
  ];
  for (const c of cases) {
    it(`${String(c.policy)} with draw ${c.randomValue} picks ${c.expected}, skipping exhausted, unknown and foreign-zone vSwitches`, () => {
      const choice = chooseVSwitch({
        vSwitchOptions: options,
        vSwitches,
        zoneId: 'zone-a',
        policy: c.policy,
        randomValue: c.randomValue,
      });
      assert.ok(choice.ok);
      assert.equal(choice.vSwitch.vSwitchId, c.expected);
    });
  }

  it('reports when no vSwitch of the zone has free addresses, without reordering the options', () => {
    const given = ['vsw-empty', 'vsw-other-zone'];
    const choice = chooseVSwitch({
      vSwitchOptions: given,
      vSwitches,
      zoneId: 'zone-a',
      policy: 'random',
      randomValue: 0.5,
    });
    assert.equal(choice.ok, false);
    assert.match(choice.ok ? '' : choice.message, /no available vSwitch for zone zone-a/);
    assert.deepEqual(given, ['vsw-empty', 'vsw-other-zone']);
  });
});
