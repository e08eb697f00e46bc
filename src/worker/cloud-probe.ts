import type { EcsApi } from '../activities/ecs/ecs-api.js';
import { EcsCallError } from '../activities/ecs/ecs-errors.js';
import { ENIFLOW_CLUSTER_TAG_KEY, ENIFLOW_CREATOR_TAG } from '../ipam/eni-ownership.js';
import { WATCHED_CALL_FAILURE_TYPES } from '../ipam/operation-failures.js';

/**
 * What one probe learned: the action answers (anything but a retryable failure or a refusal), still fails
 * retryably, or RAM refused the probe (`Forbidden…`, `NoPermission`: it tells nothing about the action).
 */
export type ProbeAnswer = 'answers' | 'failing' | 'refused';

/** Cheap calls of the actions activity types make; `probes` says which activity types have one. */
export interface CloudProbe {
  probes: (activityType: string) => boolean;
  probe: (activityType: string) => Promise<ProbeAnswer>;
}

/** Ids no resource has: a healthy API answers `…NotFound`, so a probe changes nothing in the account. */
export const PROBE_ENI_ID = 'eni-eniflow-probe-none';
export const PROBE_INSTANCE_ID = 'i-eniflow-probe-none';
const PROBE_VSWITCH_ID = 'vsw-eniflow-probe-none';
const PROBE_SECURITY_GROUP_ID = 'sg-eniflow-probe-none';

/** A RAM refusal: the policy does not allow this call, whatever the action's health. */
export function isRamRefusal(code: string): boolean {
  return code.startsWith('Forbidden') || code.includes('NoPermission');
}

/**
 * The probes of the ECS activities: each calls the activity's action against ids that cannot exist, so the only
 * answers are a refusal (`InvalidEniId.NotFound`, `InvalidVSwitchId.NotFound`, …: the action is back) or the
 * outage's own 5xx or throttling. A create names a vSwitch that does not exist, so it cannot make an ENI; it carries
 * the tags a real create carries (`clusterId`'s), which the shipped RAM policy requires. Calls on the nonexistent
 * ENI carry no cluster tag: where RAM checks before the lookup, they are refused and tell nothing.
 */
export function ecsProbes(ecs: EcsApi, cluster: { clusterId?: string | undefined } = {}): CloudProbe {
  const tags: Record<string, string> = { [ENIFLOW_CREATOR_TAG.key]: ENIFLOW_CREATOR_TAG.value };
  if (cluster.clusterId !== undefined) tags[ENIFLOW_CLUSTER_TAG_KEY] = cluster.clusterId;
  const eni = { eniId: PROBE_ENI_ID };
  const assignIpv4 = () => ecs.assignIpv4({ ...eni, count: 1, clientToken: 'eniflow-probe' });
  const assignIpv6 = () => ecs.assignIpv6({ ...eni, count: 1, clientToken: 'eniflow-probe' });
  const calls: Readonly<Record<string, () => Promise<unknown>>> = {
    attachEni: () => ecs.attachEni({ ...eni, instanceId: PROBE_INSTANCE_ID }),
    detachEni: () => ecs.detachEni({ ...eni, instanceId: PROBE_INSTANCE_ID }),
    deleteEni: () => ecs.deleteEni(eni),
    createEni: () =>
      ecs.createEni({
        vSwitchId: PROBE_VSWITCH_ID,
        securityGroupIds: [PROBE_SECURITY_GROUP_ID],
        eniType: 'Secondary',
        trafficMode: 'Standard',
        ipv4Count: 1,
        ipv6Count: 0,
        tags,
        clientToken: 'eniflow-probe',
        description: 'eniflow probe (cannot succeed: no such vSwitch)',
      }),
    assignIpv4,
    assignIpv6,
    assignIpv4Prefixes: assignIpv4,
    assignIpv6Prefixes: assignIpv6,
    unassignIpv4: () => ecs.unassignIpv4({ ...eni, ips: ['192.0.2.1'] }),
    unassignIpv6: () => ecs.unassignIpv6({ ...eni, ips: ['2001:db8::1'] }),
    waitEniStatus: () => ecs.describeEnis({ eniIds: [PROBE_ENI_ID] }),
    describeEnisById: () => ecs.describeEnis({ eniIds: [PROBE_ENI_ID] }),
    describeNodeEnis: () => ecs.describeEnis({ eniIds: [PROBE_ENI_ID] }),
  };
  return {
    probes: (activityType) => calls[activityType] !== undefined,
    probe: (activityType) => {
      const call = calls[activityType];
      if (call === undefined) return Promise.resolve('refused');
      return call().then(
        (): ProbeAnswer => 'answers',
        (error: unknown): ProbeAnswer => {
          if (!(error instanceof EcsCallError) || WATCHED_CALL_FAILURE_TYPES.includes(error.failure.type))
            return 'failing';
          return isRamRefusal(error.failure.code) ? 'refused' : 'answers';
        },
      );
    },
  };
}
