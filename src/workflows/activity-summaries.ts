import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { ActivityInterfaceFor, ActivityOptions } from '@temporalio/workflow';

import type { Activities } from '../activities/index.js';
import { ECS_ACTIVITY_APIS, ecsActivityTaskQueue } from '../shared/ecs-budget.js';

type ActivityName = keyof Activities;
type InputOf<K extends ActivityName> = Parameters<Activities[K]>[0];

function ids(list: readonly string[]): string {
  return list.length <= 3 ? list.join(', ') : `${list.slice(0, 3).join(', ')} +${list.length - 3}`;
}

/**
 * What the Web UI's Pending Activities and event list show next to the activity type: the ENI, instance or vSwitch
 * a cloud call is about. Only cloud calls get one, and not the per-pass vSwitch read: each summary is stored in its
 * scheduled event (about 80 bytes), which a quiet pass should not pay for.
 */
const SUMMARIES: { [K in ActivityName]?: (input: InputOf<K>) => string } = {
  createEni: (input) =>
    `${input.eniKind} ENI in ${input.vSwitchId}, ${input.ipv4Count} IPv4 + ${input.ipv6Count} IPv6` +
    ((input.ipv4PrefixCount ?? 0) + (input.ipv6PrefixCount ?? 0) > 0
      ? `, ${input.ipv4PrefixCount ?? 0} IPv4 + ${input.ipv6PrefixCount ?? 0} IPv6 prefixes`
      : ''),
  attachEni: (input) => `${input.eniId} → ${input.instanceId}`,
  waitEniStatus: (input) => `${input.eniId} until ${input.status}`,
  detachEni: (input) => `${input.eniId} from ${input.instanceId}`,
  deleteEni: (input) => input.eniId,
  assignIpv4: (input) => `${input.count} on ${input.eniId}`,
  assignIpv6: (input) => `${input.count} on ${input.eniId}`,
  unassignIpv4: (input) => `${input.ips.length} from ${input.eniId}`,
  unassignIpv6: (input) => `${input.ips.length} from ${input.eniId}`,
  assignIpv4Prefixes: (input) => `${input.count} prefixes on ${input.eniId}`,
  assignIpv6Prefixes: (input) => `${input.count} prefixes on ${input.eniId}`,
  unassignIpv4Prefixes: (input) => `${input.prefixes.length} prefixes from ${input.eniId}`,
  unassignIpv6Prefixes: (input) => `${input.prefixes.length} prefixes from ${input.eniId}`,
  describeNodeEnis: (input) => input.instanceId,
  describeEnisById: (input) => ids(input.eniIds),
  findEnisByIntent: (input) => `intent ${ids(input.clientTokens)}`,
  adoptEnis: (input) => `${ids(input.eniIds)} for cluster ${input.clusterId}`,
};

type Summarize = (input: unknown) => string;
type UntypedActivity = (input: unknown) => Promise<unknown>;

/**
 * `proxyActivities` for cloud calls: each ECS activity is scheduled on the task queue of the OpenAPI action it calls
 * (`<taskQueue>-ecs-<Action>`, see shared/ecs-budget.ts), whose server-side rate limit is the cluster's budget for
 * that action, and carries a {@link SUMMARIES} summary. The queue is resolved when the activity is scheduled, from
 * the workflow's own task queue, so one deployment's workflows use that deployment's queues. A summary is user
 * metadata of the command, not part of it, so histories recorded without summaries replay unchanged.
 */
export function proxyActivitiesWithSummaries(options: ActivityOptions): ActivityInterfaceFor<Activities> {
  const plain = proxyActivities<Activities>(options);
  return new Proxy(plain, {
    get(target, name, receiver): unknown {
      if (typeof name !== 'string' || !(name in SUMMARIES || name in ECS_ACTIVITY_APIS)) {
        return Reflect.get(target, name, receiver);
      }
      const summarize = (SUMMARIES as Partial<Record<string, Summarize>>)[name];
      return (input: unknown) => {
        const taskQueue = ecsActivityTaskQueue(workflowInfo().taskQueue, name);
        const routed: unknown = proxyActivities<Activities>({
          ...options,
          ...(taskQueue === undefined ? {} : { taskQueue }),
          ...(summarize === undefined ? {} : { summary: summarize(input) }),
        });
        const activity = (routed as Partial<Record<string, UntypedActivity>>)[name];
        if (activity === undefined) throw new Error(`no activity ${name}`);
        return activity(input);
      };
    },
  });
}
