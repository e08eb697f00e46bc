/**
 * ClientToken semantics of the emulator through the real `@alicloud/ecs20140526` client: replay, mismatch,
 * `IdempotentFailed` after a first use that failed inside the service, and forgetting by time, not by count.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, beforeEach, describe, it } from 'node:test';

import { captureError, DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

describe('ClientToken memory', () => {
  let harness: EmulatorHarness;
  const secondaries = async (): Promise<number> =>
    (await harness.emulator.admin.inventory()).networkInterfaces.filter((eni) => eni.type === 'Secondary').length;

  before(async () => {
    harness = await startEmulatorHarness();
  });
  beforeEach(async () => {
    await harness.emulator.admin.reset();
  });
  after(async () => {
    await harness.close();
  });

  it('a token whose first use failed inside the service answers IdempotentFailed on reuse, creating nothing', async () => {
    const request = { vSwitchId: DEMO.vSwitchH, secondaryPrivateIpAddressCount: 1, clientToken: 'token-spent' };
    await harness.emulator.admin.addFaults(['CreateNetworkInterface next 1 error InternalError 500 spent']);
    const first = await captureError(() => harness.createEni(request));
    assert.equal(first.code, 'InternalError');
    const reuse = await captureError(() => harness.createEni(request));
    assert.equal(reuse.code, 'IdempotentFailed');
    assert.equal(reuse.statusCode, 400);
    // Other parameters under the spent token: a mismatch, as for any used token.
    const other = await captureError(() => harness.createEni({ ...request, secondaryPrivateIpAddressCount: 2 }));
    assert.equal(other.code, 'IdempotentParameterMismatch');
    assert.equal(await secondaries(), 0);
    // A new token works.
    await harness.createEni({ ...request, clientToken: 'token-fresh' });
    assert.equal(await secondaries(), 1);
  });

  it('a business refusal spends the token too; a front-end error (no `spent`) does not', async () => {
    const small = { vSwitchId: DEMO.vSwitchH, secondaryPrivateIpAddressCount: 1 };
    const refused = await captureError(() =>
      harness.createEni({
        ...small,
        securityGroupIds: ['sg-a'],
        securityGroupId: 'sg-b',
        clientToken: 'token-invalid',
      }),
    );
    assert.equal(refused.code, 'InvalidParameter.Conflict');
    const again = await captureError(() =>
      harness.createEni({
        ...small,
        securityGroupIds: ['sg-a'],
        securityGroupId: 'sg-b',
        clientToken: 'token-invalid',
      }),
    );
    assert.equal(again.code, 'IdempotentFailed');

    await harness.emulator.admin.addFaults(['CreateNetworkInterface next 1 error ServiceUnavailable']);
    const unavailable = await captureError(() => harness.createEni({ ...small, clientToken: 'token-503' }));
    assert.equal(unavailable.code, 'ServiceUnavailable');
    await harness.createEni({ ...small, clientToken: 'token-503' });
    assert.equal(await secondaries(), 1);
  });

  it('forgets a token after the retention window, by time: the same token then creates anew', async () => {
    await harness.emulator.admin.updateSettings({ limits: { clientTokenRetentionMs: 300 } });
    const request = { vSwitchId: DEMO.vSwitchH, secondaryPrivateIpAddressCount: 1, clientToken: 'token-old' };
    const first = await harness.createEni(request);
    assert.equal(await harness.createEni(request), first, 'replayed inside the window');
    await sleep(400);
    const later = await harness.createEni(request);
    assert.notEqual(later, first, 'a forgotten token is a new request');
    assert.equal(await secondaries(), 2);
    const settings = await harness.emulator.admin.updateSettings({ limits: { clientTokenRetentionMs: 86_400_000 } });
    assert.equal(settings.limits.clientTokenRetentionMs, 86_400_000);
  });

  it('remembers many tokens within the window (no forgetting by count)', async () => {
    const tokens = Array.from({ length: 30 }, (_, i) => `token-many-${i}`);
    const ids: string[] = [];
    for (const clientToken of tokens) {
      ids.push(await harness.createEni({ vSwitchId: DEMO.vSwitchH, clientToken }));
    }
    assert.equal(await harness.createEni({ vSwitchId: DEMO.vSwitchH, clientToken: tokens[0] }), ids[0]);
    assert.equal(await secondaries(), 30);
  });
});
