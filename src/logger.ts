import { pino } from 'pino';
import type { Logger } from 'pino';

/** Log field names, fixed so logs can be queried across components. */
export const LOG_FIELDS = {
  nodeName: 'nodeName',
  instanceId: 'instanceId',
  eniId: 'eniId',
  vSwitchId: 'vSwitchId',
  action: 'action',
  workflowId: 'workflowId',
  runId: 'runId',
  activity: 'activity',
  requestId: 'requestId',
  errorCode: 'errorCode',
} as const;

export type { Logger };

/** The root JSON logger; `LOG_LEVEL` sets the level (default `info`). */
export function createLogger(options: { name: string; level?: string; destination?: NodeJS.WritableStream }): Logger {
  return pino(
    { name: options.name, level: options.level ?? process.env['LOG_LEVEL'] ?? 'info', base: { pid: process.pid } },
    options.destination ?? process.stdout,
  );
}
