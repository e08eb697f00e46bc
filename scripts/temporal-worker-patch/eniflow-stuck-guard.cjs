'use strict';
/*
 * eniflow patch (issue 29, point 1): the workflow thread's stuck guard. Copied by eniflow's
 * scripts/patch-temporal-worker.mjs into @temporalio/worker/lib/workflow/eniflow-stuck-guard.js at install.
 *
 * The SDK passes `timeout: isolateExecutionTimeoutMs` to every call into the workflow sandbox, and Node starts and
 * joins a watchdog thread for each such call (~100 µs of CPU per call, plus a scheduling wait under load). The patch
 * removes that timeout; this guard keeps its job, i.e. a workflow stuck in a synchronous loop must not hang the worker
 * silently, with one shared-memory mark per request instead of one thread per call:
 * - the workflow thread writes, into a SharedArrayBuffer, which request it is running synchronously (every call into
 *   the sandbox for that request happens there) and since when, and clears it when that part is done;
 * - the SDK worker's thread checks that mark every half isolateExecutionTimeout. A request still running after
 *   isolateExecutionTimeout is a workflow stuck in a loop (nothing in that part waits): the guard logs an error naming
 *   the workflow, then terminates the workflow thread, which fails every pending request with an UnexpectedError:
 *   the SDK worker shuts down and `Worker.run()` rejects (eniflow's worker process exits non-zero and is restarted).
 * The time a request waits in the thread's queue is not counted (a per-request timer on the sending side would count
 * it, and trip under a burst of activations that are each fast).
 * Unlike the SDK's timeout, the guard cannot interrupt only the one stuck call: after a terminate the thread's other
 * cached workflows are gone too, so failing the worker is the only honest outcome.
 * Only the production thread model is guarded (`debugMode`, which replay workers use, runs workflows in-process,
 * where the SDK's own timeout was ~49 days anyway).
 */
Object.defineProperty(exports, '__esModule', { value: true });
exports.threadMarker = threadMarker;
exports.whileMarked = whileMarked;
exports.onSend = onSend;
const { performance } = require('node:perf_hooks');
const errors_1 = require('../errors');

const SLOT_REQUEST = 0;
const SLOT_SINCE_MS = 1;
const IDLE = -1n;

/**
 * A clock both threads share that a wall-clock step (NTP, suspend) does not move: each thread's monotonic clock from
 * its own origin, the origins being wall times taken when each thread started (moments apart).
 */
function monotonicNowMs() {
  return Math.round(performance.timeOrigin + performance.now());
}

/** Workflow-thread side: the mark in the buffer the `init` request carried (none from an unpatched sender). */
function threadMarker(buffer) {
  if (!(buffer instanceof SharedArrayBuffer)) return undefined;
  const slots = new BigInt64Array(buffer);
  return {
    enter(requestId) {
      // Since first, then the request: the guard reads the request first, so it never pairs one with a later since.
      Atomics.store(slots, SLOT_SINCE_MS, BigInt(monotonicNowMs()));
      Atomics.store(slots, SLOT_REQUEST, BigInt(requestId));
    },
    leave() {
      Atomics.store(slots, SLOT_REQUEST, IDLE);
    },
  };
}

/**
 * Runs `handle(request)` (an async function) with the request marked until its synchronous part returns: that part
 * holds every call into the sandbox (activate, unblock conditions, conclude; create; dispose).
 */
function whileMarked(marker, request, handle) {
  if (marker === undefined) return handle(request);
  marker.enter(request.requestId);
  try {
    return handle(request);
  } finally {
    marker.leave();
  }
}

/** SDK-worker side, called by `WorkerThreadClient.send` for each request before it is posted. */
function onSend(client, input) {
  if (input.type === 'init') {
    client.eniflowStuckGuard = new StuckGuard(client, input.isolateExecutionTimeoutMs);
    input.stuckGuardBuffer = client.eniflowStuckGuard.buffer;
    return;
  }
  client.eniflowStuckGuard?.sent(input);
}

class StuckGuard {
  buffer = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT);
  slots = new BigInt64Array(this.buffer);
  /** The thread's workflows by run id, to name the stuck one (activations carry only the run id). */
  workflows = new Map();

  constructor(client, timeoutMs) {
    this.client = client;
    this.timeoutMs = timeoutMs;
    Atomics.store(this.slots, SLOT_REQUEST, IDLE);
    this.timer = setInterval(() => this.check(), Math.max(10, Math.floor(timeoutMs / 2)));
    this.timer.unref();
  }

  sent(input) {
    if (input.type === 'create-workflow') {
      const { workflowId, workflowType, runId } = input.options.info;
      this.workflows.set(runId, { workflowId, workflowType });
    } else if (input.type === 'dispose-workflow') {
      this.workflows.delete(input.runId);
    }
  }

  check() {
    const { client } = this;
    if (client.workerExited) {
      clearInterval(this.timer);
      return;
    }
    const requestId = Atomics.load(this.slots, SLOT_REQUEST);
    if (requestId === IDLE) return;
    const ranMs = monotonicNowMs() - Number(Atomics.load(this.slots, SLOT_SINCE_MS));
    if (ranMs < this.timeoutMs) return;
    clearInterval(this.timer);
    const input = client.requestIdToCompletion.get(requestId)?.input;
    const runId = input?.runId ?? input?.options?.info?.runId;
    const workflow = runId === undefined ? undefined : this.workflows.get(runId);
    const meta = {
      workflowId: workflow?.workflowId,
      runId,
      workflowType: workflow?.workflowType,
      request: input?.type,
      ranMs,
      isolateExecutionTimeoutMs: this.timeoutMs,
    };
    const message =
      `Workflow thread stuck: workflow ${meta.workflowId ?? '(unknown)'} (run ${runId ?? '(unknown)'}, type ` +
      `${meta.workflowType ?? '(unknown)'}) has run for ${ranMs} ms in one ${meta.request ?? 'request'}, over ` +
      `isolateExecutionTimeout (${this.timeoutMs} ms): a busy loop in workflow code? Terminating the workflow ` +
      `thread; the worker fails.`;
    client.logger.error(message, meta);
    // Pending requests are rejected with this error on the thread's exit (WorkerThreadClient's 'exit' handler).
    client.exitError = new errors_1.UnexpectedError(message);
    void client.workerThread.terminate();
  }
}
