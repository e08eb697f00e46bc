import type { Context as ActivityContext } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger, makeTelemetryFilterString } from '@temporalio/worker';
import type { ActivityInterceptors, LogEntry, LogLevel, RuntimeOptions } from '@temporalio/worker';

import { attemptWillBeRetried } from '../activities/activity-log.js';
import type { Logger } from '../logger.js';
import { nodeNameOfWorkflowId } from '../shared/workflow-ids.js';

type PinoLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

const PINO_LEVELS: Record<LogLevel, PinoLevel> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** The SDK level that lets through what pino's `level` would print (pino drops the rest anyway). */
function sdkLevelOf(level: string): LogLevel {
  if (level === 'trace') return 'TRACE';
  if (level === 'debug') return 'DEBUG';
  if (level === 'info') return 'INFO';
  if (level === 'warn') return 'WARN';
  return 'ERROR';
}

/**
 * Failures of activity attempts the server will retry, marked by {@link activityLogInterceptors} as they pass and
 * read by the SDK's "Activity failed" line: the marker is the thrown object itself, which the SDK hands to its
 * logger unchanged.
 */
const retriedAttemptFailures = new WeakSet<object>();

/**
 * Activity interceptors for logs: every SDK line about an activity names its node (from the workflow id), and a
 * failed attempt the server will retry is marked as routine.
 */
export function activityLogInterceptors(ctx: ActivityContext): ActivityInterceptors {
  return {
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (error) {
          if (typeof error === 'object' && error !== null && attemptWillBeRetried(ctx.info, error)) {
            retriedAttemptFailures.add(error);
          }
          throw error;
        }
      },
    },
    outbound: {
      getLogAttributes(attributes, next) {
        const nodeName = nodeNameOfWorkflowId(ctx.info.workflowExecution?.workflowId ?? '');
        return next(nodeName === undefined ? attributes : { nodeName, ...attributes });
      },
    },
  };
}

/** An error as one short log field: an ApplicationFailure's type and message (its details repeat them). */
function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof ApplicationFailure) {
    return { error: { type: error.type, message: error.message, nonRetryable: error.nonRetryable } };
  }
  // Anything else is unexpected (a bug, a broken connection): its stack is worth the bytes.
  return { err: error };
}

/**
 * The Temporal runtime's logger: the SDK's lines, workflow `log` calls and the native core's forwarded lines, as
 * pino JSON under `component: temporal-sdk`. "Activity failed" for an attempt that will be retried drops to debug;
 * for the attempt that ends the activity it is info, since the workflow reports what that failure did to the node
 * (one warning per failed pass). The task token (a long opaque string on every activity line) is dropped.
 */
export function temporalSdkLogger(logger: Logger): DefaultLogger {
  const sdkLogger = logger.child({ component: 'temporal-sdk' });
  return new DefaultLogger(sdkLevelOf(logger.level), (entry: LogEntry) => {
    const meta: Record<string, unknown> = { ...entry.meta };
    const error = meta['error'];
    delete meta['error'];
    delete meta['taskToken'];
    let level = PINO_LEVELS[entry.level];
    if (entry.message === 'Activity failed' && level === 'warn') {
      level = typeof error === 'object' && error !== null && retriedAttemptFailures.has(error) ? 'debug' : 'info';
    }
    sdkLogger[level]({ ...meta, ...(error === undefined ? {} : errorFields(error)) }, entry.message);
  });
}

/**
 * Log options of `Runtime.install`: the SDK's logger above, and the native core's own lines forwarded into it (by
 * default core prints them to stderr in its own format). Core's INFO is per-poller chatter and its DEBUG per RPC,
 * so core is held to WARN unless pino is at debug, and then to INFO.
 */
export function temporalRuntimeLogging(logger: Logger): {
  logger: DefaultLogger;
  telemetryOptions: { logging: NonNullable<NonNullable<RuntimeOptions['telemetryOptions']>['logging']> };
} {
  const verbose = logger.level === 'debug' || logger.level === 'trace';
  return {
    logger: temporalSdkLogger(logger),
    telemetryOptions: {
      logging: {
        filter: makeTelemetryFilterString({ core: verbose ? 'INFO' : 'WARN', other: verbose ? 'WARN' : 'ERROR' }),
        forward: {},
      },
    },
  };
}
