import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FaultRuleInput } from './fault-rules.js';
import type { SettingsPatch } from './settings.js';

/** An AccessKey pair the emulator accepts. */
export interface AccessKeyPair {
  accessKeyId: string;
  accessKeySecret: string;
}

/** A vSwitch: its zone and VPC, its IPv4 CIDR and optionally an IPv6 CIDR (IPv6 is then enabled). */
export interface FixtureVSwitch {
  vSwitchId: string;
  vpcId: string;
  zoneId: string;
  cidrBlock: string;
  ipv6CidrBlock?: string;
  vSwitchName?: string;
  tags?: Record<string, string>;
}

export interface FixtureSecurityGroup {
  securityGroupId: string;
  vpcId: string;
}

/** An instance type with the ENI limits DescribeInstanceTypes reports. */
export interface FixtureInstanceType {
  instanceTypeId: string;
  instanceTypeFamily: string;
  cpuCoreCount: number;
  memorySize: number;
  /** ENIs per instance, the primary ENI included. */
  eniQuantity: number;
  /** IPv4 per ENI, the primary IP included. */
  eniPrivateIpAddressQuantity: number;
  eniIpv6AddressQuantity: number;
  /** ENIs including trunk members; defaults to `eniQuantity`. */
  eniTotalQuantity?: number;
  /** Whether a Trunk ENI may be attached; defaults to false. */
  eniTrunkSupported?: boolean;
  /** HighPerformance (eRDMA) ENIs per instance; defaults to 0. */
  eriQuantity?: number;
  /** Baseline inbound internal bandwidth in Kbit/s (`InstanceBandwidthRx`); defaults to 1,024,000 (1 Gbit/s). */
  instanceBandwidthRx?: number;
  /** Baseline outbound internal bandwidth in Kbit/s (`InstanceBandwidthTx`); defaults to 1,024,000. */
  instanceBandwidthTx?: number;
  /** Physical network cards, reported as `NetworkCards.NetworkCardInfo[]` with indexes 0…n−1; defaults to 1. */
  networkCardQuantity?: number;
}

export type InstanceStatus = 'Running' | 'Stopped' | 'Starting' | 'Stopping';

/** An instance; the emulator gives it a Primary ENI in `vSwitchId` at start. */
export interface FixtureInstance {
  instanceId: string;
  instanceType: string;
  vSwitchId: string;
  securityGroupIds: string[];
  status?: InstanceStatus;
  instanceName?: string;
  /** Fixed primary IP of the Primary ENI; otherwise the lowest free address. */
  primaryIpAddress?: string;
}

/** An ENI that exists at start; with `instanceId` it is attached (InUse), otherwise Available. */
export interface FixtureNetworkInterface {
  networkInterfaceId?: string;
  vSwitchId: string;
  securityGroupIds: string[];
  instanceId?: string;
  type?: 'Secondary' | 'Trunk';
  trafficMode?: 'Standard' | 'HighPerformance';
  secondaryIpCount?: number;
  ipv6Count?: number;
  /** IPv4 /28 and IPv6 /80 prefixes (instead of secondary addresses of the same family). */
  ipv4PrefixCount?: number;
  ipv6PrefixCount?: number;
  tags?: Record<string, string>;
  networkInterfaceName?: string;
  description?: string;
}

/** The documented fixture format (docs/ecs-emulator.md): the cloud topology plus optional settings and faults. */
export interface EmulatorFixture {
  regionId: string;
  /** Account id reported as `OwnerId`. */
  ownerId?: string;
  accessKeys: AccessKeyPair[];
  vSwitches: FixtureVSwitch[];
  securityGroups: FixtureSecurityGroup[];
  instanceTypes: FixtureInstanceType[];
  instances: FixtureInstance[];
  networkInterfaces?: FixtureNetworkInterface[];
  settings?: SettingsPatch;
  faults?: (FaultRuleInput | string)[];
}

/** Path of the default demo fixture, used when no fixture is given. */
export const DEMO_FIXTURE_PATH = fileURLToPath(new URL('./fixtures/demo.json', import.meta.url));

type Checker = (value: unknown, where: string, problems: string[]) => void;

const str: Checker = (value, where, problems) => {
  if (typeof value !== 'string' || value === '') problems.push(`${where}: expected a non-empty string`);
};
const num: Checker = (value, where, problems) => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    problems.push(`${where}: expected a number ≥ 0`);
};
const bool: Checker = (value, where, problems) => {
  if (typeof value !== 'boolean') problems.push(`${where}: expected a boolean`);
};
const strList: Checker = (value, where, problems) => {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    problems.push(`${where}: expected an array of strings`);
  }
};
const strMap: Checker = (value, where, problems) => {
  if (typeof value !== 'object' || value === null || Object.values(value).some((item) => typeof item !== 'string')) {
    problems.push(`${where}: expected an object of strings`);
  }
};
const oneOf =
  (allowed: readonly string[]): Checker =>
  (value, where, problems) => {
    if (typeof value !== 'string' || !allowed.includes(value))
      problems.push(`${where}: expected one of ${allowed.join(', ')}`);
  };

interface ObjectSpec {
  required: Record<string, Checker>;
  optional?: Record<string, Checker>;
}

function checkObject(value: unknown, at: { where: string; spec: ObjectSpec; problems: string[] }): void {
  const { where, spec, problems } = at;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push(`${where}: expected an object`);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const [key, check] of Object.entries(spec.required)) check(record[key], `${where}.${key}`, problems);
  for (const [key, check] of Object.entries(spec.optional ?? {})) {
    if (record[key] !== undefined) check(record[key], `${where}.${key}`, problems);
  }
}

function checkArray(value: unknown, at: { where: string; spec: ObjectSpec; problems: string[] }): void {
  if (!Array.isArray(value)) {
    at.problems.push(`${at.where}: expected an array`);
    return;
  }
  value.forEach((item, index) => {
    checkObject(item, { ...at, where: `${at.where}[${index}]` });
  });
}

function checkReferences(fixture: EmulatorFixture, problems: string[]): void {
  const vSwitchIds = new Set(fixture.vSwitches.map((v) => v.vSwitchId));
  const typeIds = new Set(fixture.instanceTypes.map((t) => t.instanceTypeId));
  const groupIds = new Set(fixture.securityGroups.map((g) => g.securityGroupId));
  const instanceIds = new Set(fixture.instances.map((i) => i.instanceId));
  fixture.instances.forEach((instance, index) => {
    if (!typeIds.has(instance.instanceType)) problems.push(`instances[${index}].instanceType: unknown type`);
    if (!vSwitchIds.has(instance.vSwitchId)) problems.push(`instances[${index}].vSwitchId: unknown vSwitch`);
    for (const group of instance.securityGroupIds) {
      if (!groupIds.has(group)) problems.push(`instances[${index}].securityGroupIds: unknown ${group}`);
    }
  });
  (fixture.networkInterfaces ?? []).forEach((eni, index) => {
    if (!vSwitchIds.has(eni.vSwitchId)) problems.push(`networkInterfaces[${index}].vSwitchId: unknown vSwitch`);
    if (eni.instanceId !== undefined && !instanceIds.has(eni.instanceId)) {
      problems.push(`networkInterfaces[${index}].instanceId: unknown instance`);
    }
  });
}

/** Validates untrusted JSON as an {@link EmulatorFixture}; throws one Error listing every problem. */
export function parseFixture(value: unknown, source: string): EmulatorFixture {
  const problems: string[] = [];
  checkObject(value, {
    where: 'fixture',
    problems,
    spec: {
      required: { regionId: str },
      optional: { ownerId: str, settings: () => undefined, faults: () => undefined },
    },
  });
  if (problems.length > 0) throw new Error(`${source}: ${problems.join('; ')}`);
  const record = value as Record<string, unknown>;
  checkArray(record['accessKeys'], {
    where: 'accessKeys',
    problems,
    spec: { required: { accessKeyId: str, accessKeySecret: str } },
  });
  checkArray(record['vSwitches'], {
    where: 'vSwitches',
    problems,
    spec: {
      required: { vSwitchId: str, vpcId: str, zoneId: str, cidrBlock: str },
      optional: { ipv6CidrBlock: str, vSwitchName: str, tags: strMap },
    },
  });
  checkArray(record['securityGroups'], {
    where: 'securityGroups',
    problems,
    spec: { required: { securityGroupId: str, vpcId: str } },
  });
  checkArray(record['instanceTypes'], {
    where: 'instanceTypes',
    problems,
    spec: {
      required: {
        instanceTypeId: str,
        instanceTypeFamily: str,
        cpuCoreCount: num,
        memorySize: num,
        eniQuantity: num,
        eniPrivateIpAddressQuantity: num,
        eniIpv6AddressQuantity: num,
      },
      optional: {
        eniTotalQuantity: num,
        eniTrunkSupported: bool,
        eriQuantity: num,
        instanceBandwidthRx: num,
        instanceBandwidthTx: num,
        networkCardQuantity: num,
      },
    },
  });
  checkArray(record['instances'], {
    where: 'instances',
    problems,
    spec: {
      required: { instanceId: str, instanceType: str, vSwitchId: str, securityGroupIds: strList },
      optional: {
        status: oneOf(['Running', 'Stopped', 'Starting', 'Stopping']),
        instanceName: str,
        primaryIpAddress: str,
      },
    },
  });
  if (record['networkInterfaces'] !== undefined) {
    checkArray(record['networkInterfaces'], {
      where: 'networkInterfaces',
      problems,
      spec: {
        required: { vSwitchId: str, securityGroupIds: strList },
        optional: {
          networkInterfaceId: str,
          instanceId: str,
          type: oneOf(['Secondary', 'Trunk']),
          trafficMode: oneOf(['Standard', 'HighPerformance']),
          secondaryIpCount: num,
          ipv6Count: num,
          ipv4PrefixCount: num,
          ipv6PrefixCount: num,
          tags: strMap,
          networkInterfaceName: str,
          description: str,
        },
      },
    });
  }
  if (record['faults'] !== undefined && !Array.isArray(record['faults'])) problems.push('faults: expected an array');
  if (problems.length === 0) checkReferences(value as EmulatorFixture, problems);
  if (problems.length > 0) throw new Error(`${source}: ${problems.join('; ')}`);
  return value as EmulatorFixture;
}

/** Reads and validates a fixture file. */
export async function loadFixtureFile(path: string): Promise<EmulatorFixture> {
  const text = await readFile(path, 'utf8');
  return parseFixture(JSON.parse(text) as unknown, path);
}
