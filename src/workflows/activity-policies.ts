import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

/**
 * Timeouts and retry policies of every activity, in one place. They mirror Terway's ENICreate, ENIIPOps and
 * WaitENIStatus backoffs in spirit: few tries for create, moderate for IP operations, long polls for status waits.
 * The failure types listed as non-retryable are those a retry cannot fix (see ecs-errors.ts, kube/kube-failures.ts).
 */

const NON_RETRYABLE_ECS = [
  'EcsVSwitchExhausted',
  'EcsQuotaExceeded',
  'EcsNotFound',
  'EcsInstanceNotFound',
  'EcsInvalidRequest',
  'EniAttachFailed',
];
const NON_RETRYABLE_KUBE = ['KubeNotFound', 'KubeInvalidRequest'];

export const ACTIVITY_POLICIES = {
  /** ENICreate: 2 tries, 10 s apart; a create that keeps failing is better re-planned on the next pass. */
  createEni: {
    startToCloseTimeout: '60 seconds',
    retry: {
      initialInterval: '10 seconds',
      backoffCoefficient: 2,
      maximumAttempts: 2,
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /**
   * Attach is asynchronous and quick to accept; retry twice on throttling or 5xx (after full-jitter delays under 1 s
   * and 2 s, `ecsRetryDelayMs`): a blip passes, and a fault that outlasts them fails the pass within about 3 s, to be
   * retried on the node's growing backoff and shown as `Error`.
   */
  attachEni: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      maximumAttempts: 3,
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /**
   * WaitENIStatus: one describe per attempt; "not there yet" is a retryable failure retried after the poll interval
   * (its `nextRetryDelay`), so each poll goes through the DescribeNetworkInterfaces queue and its budget, and the
   * retries write no history. The whole wait is bounded by the schedule-to-close timeout (Terway gives an attach
   * 2 min; time waiting for the queue's budget counts too); a throttled describe is retried with jitter.
   */
  waitEniStatus: {
    startToCloseTimeout: '30 seconds',
    scheduleToCloseTimeout: '4 minutes',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /** eni_release: detach and delete may meet a busy ENI; 8 tries with doubling backoff, capped. */
  releaseEni: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '4 seconds',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: 8,
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /** ENIIPOps: 6 tries about 5 s apart. */
  ipOps: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '5 seconds',
      backoffCoefficient: 1,
      maximumAttempts: 6,
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /**
   * Adoption's TagResources: a few tries; a pass whose adoption still fails goes on (the ENIs' changes are refused
   * by the RAM policy until they are tagged) and the next OpenAPI sync tries again.
   */
  adoptEnis: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 2,
      maximumAttempts: 3,
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /** Reads of the cloud: cheap to repeat. */
  ecsRead: {
    startToCloseTimeout: '60 seconds',
    retry: {
      initialInterval: '2 seconds',
      backoffCoefficient: 1.5,
      maximumInterval: '30 seconds',
      maximumAttempts: 6,
      nonRetryableErrorTypes: NON_RETRYABLE_ECS,
    },
  },
  /** Reads of Kubernetes. */
  kubeRead: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: 10,
      nonRetryableErrorTypes: NON_RETRYABLE_KUBE,
    },
  },
  /**
   * The status write is retried until it lands (no attempt limit): the workflow holds the truth of what it did to
   * the cloud, and the CR must learn it.
   */
  statusWrite: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      nonRetryableErrorTypes: NON_RETRYABLE_KUBE,
    },
  },
  /** Conditions and events are best effort: a few tries, then the pass goes on. */
  kubeNotice: {
    startToCloseTimeout: '15 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumAttempts: 3,
      nonRetryableErrorTypes: NON_RETRYABLE_KUBE,
    },
  },
} satisfies Record<string, ActivityOptions>;

/**
 * A policy with one attempt: for a call the node's failure ledger already has failing with a retryable error, the
 * activity's retries inside the pass would only repeat the failure (calls against the action's budget); the node's
 * growing backoff, and the worker's wake when the call answers again, retry it instead.
 */
export function singleAttempt(policy: ActivityOptions): ActivityOptions {
  return { ...policy, retry: { ...policy.retry, maximumAttempts: 1 } };
}

/**
 * Cheap reads run as local activities, to keep histories small: no round trip through the task queue, and one
 * marker in history instead of three events and a workflow task of their own. Same retries as their remote
 * counterparts; a retry waiting longer than `localRetryThreshold` becomes a timer.
 */
export const LOCAL_ACTIVITY_POLICIES = {
  kubeRead: { ...ACTIVITY_POLICIES.kubeRead, localRetryThreshold: '10 seconds' },
  ecsRead: { ...ACTIVITY_POLICIES.ecsRead, localRetryThreshold: '10 seconds' },
  /**
   * The node's status write, conditions and Events: one apiserver request each, made by the worker that runs the
   * pass, so a pass served from the warm pool (read, write) is one workflow task with two markers.
   */
  statusWrite: { ...ACTIVITY_POLICIES.statusWrite, localRetryThreshold: '10 seconds' },
  kubeNotice: { ...ACTIVITY_POLICIES.kubeNotice, localRetryThreshold: '10 seconds' },
} satisfies Record<string, LocalActivityOptions>;
