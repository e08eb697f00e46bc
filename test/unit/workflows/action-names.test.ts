/**
 * One name per action: a failed cloud call reads the same in the `state` query, the CLI and the node's Warning, by
 * its ECS action name, each part (action, code, RequestId) once. Before, the CLI printed
 * `attachEni eni-1: EcsTransient ServiceUnavailable: AttachNetworkInterface: ServiceUnavailable (RequestId r) (RequestId r)`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { ecsApplicationFailure } from '../../../src/activities/ecs/ecs-application-failure.js';
import { formatNodeState } from '../../../src/cli/node-commands.js';
import { newCarriedState } from '../../../src/workflows/node/memory/carried-state.js';
import { buildNodeView, initialPassSummary } from '../../../src/workflows/node/tell/state-view.js';
import { PassRecord } from '../../../src/workflows/node/memory/pass-record.js';
import { describeStepFailure, failureOf } from '../../../src/workflows/node/memory/step-failure.js';
import type { StepFailure } from '../../../src/workflows/node/memory/step-failure.js';

const T0 = Date.UTC(2026, 11, 3, 10, 0, 0);
const CLOUD_SAYS = 'The request has failed due to a temporary failure of the server.';

function attachFailed(): StepFailure {
  const error = ecsApplicationFailure({
    type: 'EcsTransient',
    operation: 'AttachNetworkInterface',
    code: 'ServiceUnavailable',
    requestId: 'req-7',
    message: CLOUD_SAYS,
    retryable: true,
  });
  return { operation: 'attachEni', eniId: 'eni-1', failure: failureOf(error) };
}

function cliLines(step: StepFailure): string[] {
  const state = newCarriedState();
  const record = new PassRecord(state);
  record.begin();
  record.record(step, { ledger: true });
  const view = buildNodeView({
    nodeName: 'n1',
    summary: { ...initialPassSummary(), ipamState: 'Error', lastPassEndMs: T0 },
    state,
    pendingOperations: [
      { kind: 'createEni', action: 'AttachNetworkInterface', eniId: 'eni-2', detail: 'until InUse', startedAtMs: T0 },
    ],
    nextPass: undefined,
    ignoredSignals: [],
  });
  return formatNodeState(view, undefined);
}

describe('one name per action', () => {
  it('the CLI names a failed call by its ECS action, with its code and RequestId once', () => {
    const lines = cliLines(attachFailed());
    const text = lines.join('\n');
    assert.doesNotMatch(text, /attachEni|createEni/, text);
    const error = lines.find((line) => line.includes('req-7') && line.startsWith('  '));
    assert.match(
      error ?? '',
      new RegExp(
        `^ {2}\\S+Z AttachNetworkInterface eni-1: EcsTransient ServiceUnavailable: ${CLOUD_SAYS.replace('.', '\\.')} ` +
          '\\(RequestId req-7\\)$',
      ),
      text,
    );
    assert.equal(error?.split('req-7').length, 2, 'the RequestId once');
    assert.equal(error?.split('AttachNetworkInterface').length, 2, 'the action once');
    assert.ok(
      lines.some((line) => line.startsWith(`stuck on: ServiceUnavailable since `)),
      text,
    );
    const stuck = lines.find((line) => line.startsWith('stuck on:')) ?? '';
    assert.match(stuck, new RegExp(`in AttachNetworkInterface: ${CLOUD_SAYS.replace('.', '\\.')}$`), stuck);
    assert.match(text, /^in flight: AttachNetworkInterface eni-2 \(until InUse\) since /m);
  });

  it('a step whose failure names no call (a timeout) goes by its action too', () => {
    const timedOut: StepFailure = {
      operation: 'createEni',
      failure: { type: 'Unknown', message: 'activity StartToClose timeout' },
    };
    const lines = cliLines(timedOut);
    assert.ok(
      lines.some((line) => line.endsWith(' CreateNetworkInterface: Unknown: activity StartToClose timeout')),
      lines.join('\n'),
    );
  });

  it("the node's Warning about a failed step says each part once", () => {
    assert.equal(
      describeStepFailure(attachFailed()),
      `AttachNetworkInterface eni-1: ServiceUnavailable: ${CLOUD_SAYS} (RequestId req-7)`,
    );
  });
});
