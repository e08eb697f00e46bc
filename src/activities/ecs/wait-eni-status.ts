import { activityInfo, heartbeat, sleep } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';

import type { Logger } from '../../logger.js';
import type { AttachPollSchedule } from './attach-polls.js';
import type { EcsCallRunner } from './ecs-call-runner.js';
import type { EcsApi } from './ecs-api.js';

/** The failure type of "not there yet": retried by Temporal after the poll interval (see waitEniStatus). */
export const ENI_STATUS_PENDING = 'EniStatusPending';

/** What `waitEniStatus` remembers from one attempt (one describe) to the next, in its heartbeat details. */
interface WaitProgress {
  sawAttaching: boolean;
  availableStreak: number;
  /** Describes made so far, and when the first attempt began (epoch ms): what the attach poll schedule learns from. */
  describes: number;
  startedMs?: number;
}

/** The `waitEniStatus` activity of one worker process, sharing its call runner and learned attach polls. */
export function createWaitEniStatus(deps: {
  ecs: EcsApi;
  run: EcsCallRunner['run'];
  logFor: (fields: Record<string, string>) => Logger;
  pollMs: number;
  attachPolls: AttachPollSchedule;
}) {
  const { run, logFor, pollMs, attachPolls } = deps;
  /**
   * One look at the ENI per attempt: done when it has reached `status`; otherwise a retryable `EniStatusPending`
   * failure whose `nextRetryDelay` is the poll interval. Temporal's retries are dispatched through the activity's
   * task queue, so every poll is a DescribeNetworkInterfaces call under the cluster's budget, and retries add no
   * history events. Waiting for InUse, an ENI that falls back to Available has failed to attach: that is final.
   * What earlier polls saw travels in the heartbeat details, which the next attempt reads.
   */
  return async function waitEniStatus(input: {
    eniId: string;
    status: 'InUse' | 'Available';
    goneIsDone?: boolean;
  }): Promise<string> {
    const log = logFor({ eniId: input.eniId });
    const { attempt } = activityInfo();
    const attaching = input.status === 'InUse';
    const before = waitProgressOf(activityInfo().heartbeatDetails);
    const nowMs = Date.now();
    // Counted from the attach call when this process made it (the attach does not wait for the workflow task).
    const startedMs =
      attempt === 1 ? (attaching ? attachPolls.waitStartMs(input.eniId, nowMs) : nowMs) : before.startedMs;
    // An attach is never done at once: the first describe waits for when an attach is expected to be done.
    const firstPollMs = attachPolls.firstPollMs();
    if (attaching && attempt === 1) await sleep(Math.max(0, (startedMs ?? nowMs) + firstPollMs - nowMs));
    const enis = await run(log, () => deps.ecs.describeEnis({ eniIds: [input.eniId] }));
    const describes = before.describes + 1;
    const eni = enis?.[0];
    if (eni === undefined) {
      if (input.goneIsDone === true) return 'Gone';
      throw ApplicationFailure.nonRetryable(`ENI ${input.eniId} does not exist`, 'EcsNotFound');
    }
    if (eni.status === input.status) {
      if (attaching && startedMs !== undefined)
        attachPolls.observe({ describes, elapsedMs: Date.now() - startedMs, firstPollMs });
      return eni.status;
    }
    const progress: WaitProgress = {
      sawAttaching: before.sawAttaching || eni.status === 'Attaching',
      availableStreak: eni.status === 'Available' ? before.availableStreak + 1 : 0,
      describes,
      ...(startedMs === undefined ? {} : { startedMs }),
    };
    // Back to Available after Attaching, or Available poll after poll, means the attach failed. (A single
    // Available right after the attach call may just be the cloud not showing the change yet.)
    if (
      input.status === 'InUse' &&
      progress.availableStreak > 0 &&
      (progress.sawAttaching || progress.availableStreak >= 3)
    ) {
      throw ApplicationFailure.nonRetryable(
        `ENI ${input.eniId} fell back to Available: attach failed`,
        'EniAttachFailed',
      );
    }
    heartbeat(progress);
    throw ApplicationFailure.create({
      type: ENI_STATUS_PENDING,
      message: `ENI ${input.eniId} is ${eni.status}, waiting for ${input.status}`,
      nextRetryDelay: attaching ? attachPolls.nextPollMs(describes) : pollMs,
      details: [{ status: eni.status }],
    });
  };
}

function waitProgressOf(details: unknown): WaitProgress {
  const value = (typeof details === 'object' && details !== null ? details : {}) as Partial<WaitProgress>;
  return {
    sawAttaching: value.sawAttaching === true,
    availableStreak: typeof value.availableStreak === 'number' ? value.availableStreak : 0,
    describes: typeof value.describes === 'number' ? value.describes : 0,
    ...(typeof value.startedMs === 'number' ? { startedMs: value.startedMs } : {}),
  };
}
