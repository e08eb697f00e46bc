/**
 * The worker's cloud probes against the shipped RAM policy: the create probe carries this cluster's tags, so RAM
 * lets it through to the backend (whose `…NotFound` answer means the action is back), and a RAM refusal of a probe
 * is reported as a refusal, never as the action answering again.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { EcsApi } from '../../../src/activities/ecs/ecs-api.js';
import { EcsCallError } from '../../../src/activities/ecs/ecs-errors.js';
import { ecsProbes } from '../../../src/worker/cloud-probe.js';
import { ramAction, ramAllows, shippedRamPolicy } from '../../support/ram-policy.js';

/** An ECS API whose every call records its request and throws `code`. */
function ecsFailingWith(code: string, requests: Record<string, unknown>[]) {
  return new Proxy({} as EcsApi, {
    get: (_target, name) => (request: Record<string, unknown>) => {
      requests.push({ name, ...request });
      return Promise.reject(
        new EcsCallError({
          type: code.startsWith('Forbidden') ? 'EcsInvalidRequest' : 'EcsNotFound',
          operation: 'CreateNetworkInterface',
          code,
          message: code,
          retryable: false,
        }),
      );
    },
  });
}

describe('ecsProbes', () => {
  it('the create probe carries the tags the shipped RAM policy requires of a create', async () => {
    const requests: Record<string, unknown>[] = [];
    const probe = ecsProbes(ecsFailingWith('InvalidVSwitchId.NotFound', requests), { clusterId: 'c-test' });
    assert.equal(await probe.probe('createEni'), 'answers');
    const tags = requests[0]?.['tags'] as Record<string, string>;
    assert.ok(
      ramAllows(shippedRamPolicy('c-test'), { action: ramAction('CreateNetworkInterface'), requestTags: tags }),
      `RAM refuses the create probe's tags ${JSON.stringify(tags)}`,
    );
  });

  for (const code of ['Forbidden.RAM', 'Forbidden.NotAuthorized', 'NoPermission']) {
    it(`a ${code} answer is a refusal, not the action answering again`, async () => {
      const probe = ecsProbes(ecsFailingWith(code, []), { clusterId: 'c-test' });
      assert.equal(await probe.probe('assignIpv4'), 'refused');
    });
  }

  it('knows which activity types it can probe', () => {
    const probe = ecsProbes(ecsFailingWith('InvalidEniId.NotFound', []));
    assert.equal(probe.probes('attachEni'), true);
    assert.equal(probe.probes('adoptEnis'), false);
  });
});
