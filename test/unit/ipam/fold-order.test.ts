import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  applyAllocationConditions,
  canonicalJson,
  foldEniOutcomes,
  keepEniUntouched,
} from '../../../src/ipam/index.js';
import type { EniOutcome } from '../../../src/ipam/index.js';
import { aCloudEni, anEni, anIp, enisOf, v4Range } from './builders.js';

const NOW = Date.UTC(2026, 11, 3, 10, 0, 0);
const STAMP = '2026-12-03T10:00:00Z';

const start = enisOf(
  anEni('eni-1', { ipv4: [...v4Range('10.0.1', { count: 2 })] }),
  anEni('eni-2', { ipv4: [...v4Range('10.0.2', { count: 2 }), anIp('10.0.2.50', { status: 'Deleting' })] }),
  anEni('eni-3', { ipv4: [anIp('10.0.3.10', { primary: true })] }),
);

/** A pass's outcomes in plan order, two of them about the same ENI. */
const planOrder: EniOutcome[] = [
  { kind: 'ipsAssigned', eniId: 'eni-1', family: 'ipv4', ips: ['10.0.1.20', '10.0.1.21'] },
  { kind: 'eniCreated', cloud: aCloudEni('eni-9', { ipv4: [{ ip: '10.0.9.1', primary: true }], ipv6: [] }) },
  { kind: 'ipsReleased', eniId: 'eni-2', family: 'ipv4', ips: ['10.0.2.50'] },
  { kind: 'eniLeftForGc', eniId: 'eni-8' },
  { kind: 'ipsAssigned', eniId: 'eni-1', family: 'ipv4', ips: ['10.0.1.10'] },
  { kind: 'eniKeptUntouched', eniId: 'eni-3', message: 'attached elsewhere', nowRfc3339: STAMP },
  { kind: 'eniRemoved', eniId: 'eni-3' },
];

describe('foldEniOutcomes', () => {
  it('applies every kind of outcome', () => {
    const folded = foldEniOutcomes(start, planOrder);
    assert.deepEqual(Object.keys(folded['eni-1']?.ipv4 ?? {}).sort(), [
      '10.0.1.10',
      '10.0.1.11',
      '10.0.1.20',
      '10.0.1.21',
    ]);
    assert.equal(folded['eni-9']?.status, 'InUse');
    assert.equal(folded['eni-2']?.ipv4?.['10.0.2.50'], undefined);
    assert.deepEqual(folded['eni-8'], { id: 'eni-8', status: 'Deleting' });
    assert.equal(folded['eni-3'], undefined, 'removed after it was kept: the later outcome wins');
    assert.equal(start['eni-2']?.ipv4?.['10.0.2.50']?.status, 'Deleting', 'the input is not changed');
  });

  it('folds in plan order: the same outcomes in another order may leave another status', () => {
    const inPlanOrder = foldEniOutcomes(start, planOrder);
    const reversed = foldEniOutcomes(start, [...planOrder].reverse());
    assert.notEqual(canonicalJson(inPlanOrder), canonicalJson(reversed), 'order matters for eni-3');
    assert.equal(canonicalJson(foldEniOutcomes(start, planOrder)), canonicalJson(inPlanOrder), 'and is repeatable');
  });

  it('keeps an ENI attached elsewhere out of every plan, with the reason', () => {
    const kept = keepEniUntouched({ enis: start, eniId: 'eni-3', message: 'attached elsewhere', nowRfc3339: STAMP });
    assert.equal(kept['eni-3']?.unschedulable, true);
    assert.deepEqual(kept['eni-3']?.conditions?.OperationErr, { observedTime: STAMP, message: 'attached elsewhere' });
    const unknown = keepEniUntouched({ enis: {}, eniId: 'eni-x', message: 'm', nowRfc3339: STAMP });
    assert.equal(unknown['eni-x']?.status, 'Deleting');
  });
});

describe('applyAllocationConditions', () => {
  it('sets the conditions of ENIs that met errors and clears those of ENIs that met none', () => {
    const withOld = enisOf(
      anEni('eni-1', { ipv4: [...v4Range('10.0.1', { count: 2 })] }),
      {
        ...anEni('eni-2', { ipv4: [...v4Range('10.0.2', { count: 2 })] }),
        conditions: { OperationErr: { observedTime: '2026-12-03T09:00:00Z', message: 'old' } },
      },
      anEni('eni-3', { status: 'Attaching' }),
    );
    const after = applyAllocationConditions({
      enis: withOld,
      errors: [{ eniId: 'eni-1', error: { kind: 'ipNotEnough', vSwitchId: 'vsw-a' } }],
      nowMs: NOW,
    });
    assert.ok(after['eni-1']?.conditions?.InsufficientIP !== undefined, 'eni-1 says its vSwitch is exhausted');
    assert.equal(after['eni-2']?.conditions, undefined, 'eni-2 met no error: its old condition goes');
    assert.equal(after['eni-3']?.conditions, undefined, 'an ENI not InUse is left alone');
  });
});
