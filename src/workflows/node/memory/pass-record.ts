import { log } from '@temporalio/workflow';

import { noteFailure, settleFailures } from '../../../ipam/index.js';
import type { CarriedState } from './carried-state.js';
import type { StepReport } from './step-failure.js';
import { actionOf, ledgerFailureOf } from './step-failure.js';
import type { StepFailure } from './step-failure.js';

const MAX_RECORDED_ERRORS = 20;

/** How far a pass got: the ledger settles what the pass tried (see `settleFailures`). */
export interface PassEnd {
  failed: boolean;
  scope: 'completed' | 'stoppedBeforeCloud';
}

/**
 * What one pass met: its failures, in the order of the plan, and the cloud calls that succeeded. Every failure
 * goes to the recent errors (the `state` query, the pass's log line); failures of the pass's own steps also go to
 * the failure ledger, which everything that says "what fails, since when" reads. A notice that could not be
 * written is not a cause of the node's state, so it stays out of the ledger.
 */
export class PassRecord {
  private readonly state: CarriedState;
  startMs = 0;
  errors: StepFailure[] = [];
  succeededCalls = 0;
  /** Whether this pass settled the ledger already: a ready pass does in its ending, others when the pass ends. */
  settled = false;

  constructor(state: CarriedState) {
    this.state = state;
  }

  begin(): void {
    this.startMs = Date.now();
    this.errors = [];
    this.succeededCalls = 0;
    this.settled = false;
  }

  record(step: StepFailure, options: { ledger: boolean }): void {
    const { failure } = step;
    this.errors.push(step);
    const now = Date.now();
    this.state.lastErrors = [
      ...this.state.lastErrors,
      {
        atMs: now,
        operation: actionOf(step),
        type: failure.type,
        message: failure.message,
        ...(failure.code === undefined ? {} : { code: failure.code }),
        ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
        ...(step.eniId === undefined ? {} : { eniId: step.eniId }),
      },
    ].slice(-MAX_RECORDED_ERRORS);
    if (options.ledger) {
      this.state.failures = noteFailure({
        ledger: this.state.failures ?? {},
        failure: ledgerFailureOf(step),
        nowMs: now,
        passStartMs: this.startMs,
      });
    }
  }

  /** Records the steps' failures and counts their successful calls, in plan order; returns the failures. */
  foldReports(reports: readonly StepReport[]): StepFailure[] {
    const failed = reports.flatMap((report) => report.failed);
    for (const report of reports) this.succeededCalls += report.succeededCalls;
    for (const step of failed) this.record(step, { ledger: true });
    return failed;
  }

  /** Settles the ledger for what the pass tried (see `settleFailures`). */
  settle(scope: 'completed' | 'stoppedBeforeCloud' | 'threw'): void {
    this.settled = true;
    const settled = settleFailures({ ledger: this.state.failures ?? {}, passStartMs: this.startMs, scope });
    if (Object.keys(settled).length === 0) delete this.state.failures;
    else this.state.failures = settled;
  }

  /**
   * The one warning of a failed pass, naming the node and what failed. Activities log their failed attempts below
   * warn, so this line is how a failure reaches an operator once. The logger is a sink: nothing enters history, and
   * nothing is logged on replay.
   */
  logFailed(input: { nodeName: string; ipamState: string }): void {
    log.warn('Reconcile pass failed', {
      nodeName: input.nodeName,
      pass: this.state.reconcileCount,
      failureStreak: this.state.failureStreak,
      ipamState: input.ipamState,
      errors: this.errors.map(({ operation, eniId, failure }) => ({
        operation: actionOf({ operation, failure }),
        type: failure.type,
        message: failure.message,
        ...(failure.code === undefined ? {} : { code: failure.code }),
        ...(failure.requestId === undefined ? {} : { requestId: failure.requestId }),
        ...(eniId === undefined ? {} : { eniId }),
      })),
    });
  }
}
