/**
 * Conformance with a second official SDK: tools/ecs-sdk-conformance drives the emulator through Alibaba Cloud's
 * Go SDK (ecs-20140526/v7, vpc-20160428/v6, darabonba-openapi/v2) with signature checks on, so the wire format,
 * v3 signing, response nesting and error mapping are checked against a client the emulator was not written from.
 * `npm run tools` (run by `pretest`) builds the binary; without it the test fails and says so.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { isToolCached } from '../../scripts/lib/build-tools.js';
import { ECS_GO_SDK_VERSION, ecsSdkConformanceTool } from '../../scripts/lib/tools-config.js';
import { DEMO, startEmulatorHarness } from '../support/ecs-emulator.js';
import type { EmulatorHarness } from '../support/ecs-emulator.js';

const execFileAsync = promisify(execFile);

/** The parts of the driver's JSON report the test reads (PascalCase: the Go SDK's own field names). */
interface ConformanceReport {
  sdk: Record<string, string>;
  describeInstanceTypes: { InstanceTypes: { InstanceType: Record<string, unknown>[] } };
  describeVSwitchesBefore: { VSwitches: { VSwitch: { AvailableIpAddressCount: number; ZoneId: string }[] } };
  describeVSwitchesAfter: { VSwitches: { VSwitch: { AvailableIpAddressCount: number }[] } };
  createNetworkInterface: {
    NetworkInterfaceId: string;
    Status: string;
    PrivateIpSets: { PrivateIpSet: { PrivateIpAddress: string; Primary: boolean }[] };
  };
  describeNetworkInterfacesAttached: { NetworkInterfaceSets: { NetworkInterfaceSet: EniView[] } };
  assignPrivateIpAddresses: { AssignedPrivateIpAddressesSet: { PrivateIpSet: { PrivateIpAddress: string[] } } };
  unassignAgainError: { code?: string; statusCode?: number; type: string };
  describeNetworkInterfacesAfterUnassign: { NetworkInterfaceSets: { NetworkInterfaceSet: EniView[] } };
  prefixCreate: PrefixView & { NetworkInterfaceId: string };
  prefixAssignIpv4: { AssignedPrivateIpAddressesSet: { Ipv4PrefixSet: { Ipv4Prefixes: string[] } } };
  prefixAssignIpv6: { Ipv6PrefixSets: { Ipv6Prefix: string[] } };
  prefixDescribe: { NetworkInterfaceSets: { NetworkInterfaceSet: PrefixView[] } };
  prefixDescribeAfterUnassign: { NetworkInterfaceSets: { NetworkInterfaceSet: PrefixView[] } };
}

/** The prefix sets of an ENI as the Go SDK parses them (absent when the answer has none). */
interface PrefixView {
  Ipv4PrefixSets?: { Ipv4PrefixSet?: { Ipv4Prefix: string }[] };
  Ipv6PrefixSets?: { Ipv6PrefixSet?: { Ipv6Prefix: string }[] };
}

function prefixesOf(eni: PrefixView | undefined): { ipv4: string[]; ipv6: string[] } {
  return {
    ipv4: (eni?.Ipv4PrefixSets?.Ipv4PrefixSet ?? []).map((set) => set.Ipv4Prefix),
    ipv6: (eni?.Ipv6PrefixSets?.Ipv6PrefixSet ?? []).map((set) => set.Ipv6Prefix),
  };
}

interface EniView {
  NetworkInterfaceId: string;
  Status: string;
  InstanceId: string;
  Attachment?: { DeviceIndex: number };
  PrivateIpSets: { PrivateIpSet: { PrivateIpAddress: string }[] };
  Tags: { Tag: { TagKey: string; TagValue: string }[] };
}

describe('Go SDK conformance', () => {
  const tool = ecsSdkConformanceTool();
  let harness: EmulatorHarness | undefined;
  let report: ConformanceReport;

  before(async () => {
    if (!(await isToolCached(tool))) {
      throw new Error(`${tool.name} is not built (${tool.binaryPath}). Run \`npm run tools\` first.`);
    }
    // Non-zero transitions, so the driver's polling sees Attaching and Detaching on the way.
    const started = await startEmulatorHarness({
      settings: { transitionDelays: { attachMs: 150, detachMs: 150, deleteMs: 150 } },
    });
    harness = started;
    assert.equal((await started.emulator.admin.settings()).verifySignatures, true);
    const { stdout } = await execFileAsync(
      tool.binaryPath,
      [
        `-endpoint=${started.emulator.endpoint}`,
        `-access-key-id=${started.emulator.accessKeyId}`,
        `-access-key-secret=${started.emulator.accessKeySecret}`,
        `-region=${DEMO.regionId}`,
        `-vswitch=${DEMO.vSwitchH}`,
        `-instance=${DEMO.instanceLargeH}`,
        `-security-group=${DEMO.securityGroup}`,
        '-instance-type=ecs.g7.large',
      ],
      { timeout: 60_000 },
    );
    report = JSON.parse(stdout) as ConformanceReport;
  });
  after(async () => {
    await harness?.close();
  });

  it('runs the pinned Go SDK', () => {
    assert.equal(report.sdk['ecs-20140526/v7'], ECS_GO_SDK_VERSION);
    assert.match(report.sdk['vpc-20160428/v6'] ?? '', /^v6\./);
    assert.match(report.sdk['darabonba-openapi/v2'] ?? '', /^v2\./);
  });

  it('reads the instance-type limits Terway needs, bandwidth and network cards included', () => {
    const [type] = report.describeInstanceTypes.InstanceTypes.InstanceType;
    assert.deepEqual(type, {
      InstanceTypeId: 'ecs.g7.large',
      InstanceTypeFamily: 'ecs.g7',
      CpuCoreCount: 2,
      MemorySize: 8,
      EniQuantity: 3,
      EniPrivateIpAddressQuantity: 6,
      EniIpv6AddressQuantity: 6,
      EniTotalQuantity: 3,
      EniTrunkSupported: false,
      EriQuantity: 0,
      InstanceBandwidthRx: 2_048_000,
      InstanceBandwidthTx: 2_048_000,
      NetworkCardQuantity: 1,
      NetworkCards: { NetworkCardInfo: [{ NetworkCardIndex: 0 }] },
    });
  });

  it('creates, attaches, assigns, unassigns, detaches and deletes an ENI, with vSwitch accounting', () => {
    const [vSwitch] = report.describeVSwitchesBefore.VSwitches.VSwitch;
    assert.equal(vSwitch?.ZoneId, DEMO.zoneH);
    const created = report.createNetworkInterface;
    assert.equal(created.Status, 'Available');
    assert.deepEqual(
      created.PrivateIpSets.PrivateIpSet.map((ip) => ip.Primary),
      [true, false],
    );

    const [attached] = report.describeNetworkInterfacesAttached.NetworkInterfaceSets.NetworkInterfaceSet;
    assert.equal(attached?.NetworkInterfaceId, created.NetworkInterfaceId);
    assert.deepEqual(
      [attached.Status, attached.InstanceId, attached.Attachment?.DeviceIndex],
      ['InUse', DEMO.instanceLargeH, 1],
    );
    assert.deepEqual(attached.Tags.Tag, [{ TagKey: 'creator', TagValue: 'eniflow-go-sdk' }]);

    const assigned = report.assignPrivateIpAddresses.AssignedPrivateIpAddressesSet.PrivateIpSet.PrivateIpAddress;
    assert.equal(assigned.length, 2);
    const [afterUnassign] = report.describeNetworkInterfacesAfterUnassign.NetworkInterfaceSets.NetworkInterfaceSet;
    const remaining = afterUnassign?.PrivateIpSets.PrivateIpSet.map((ip) => ip.PrivateIpAddress) ?? [];
    assert.equal(remaining.length, 2);
    for (const address of assigned) assert.ok(!remaining.includes(address), `${address} still on the ENI`);

    assert.equal(
      report.describeVSwitchesAfter.VSwitches.VSwitch[0]?.AvailableIpAddressCount,
      vSwitch.AvailableIpAddressCount,
    );
  });

  it('creates an ENI with prefixes, assigns, describes and unassigns IPv4 and IPv6 prefixes', () => {
    assert.deepEqual(prefixesOf(report.prefixCreate), {
      ipv4: ['10.10.0.16/28'],
      ipv6: ['2408:4005:3f2:a00:1::/80'],
    });
    const assignedV4 = report.prefixAssignIpv4.AssignedPrivateIpAddressesSet.Ipv4PrefixSet.Ipv4Prefixes;
    assert.deepEqual(assignedV4, ['10.10.0.32/28', '10.10.0.48/28']);
    const assignedV6 = report.prefixAssignIpv6.Ipv6PrefixSets.Ipv6Prefix;
    assert.deepEqual(assignedV6, ['2408:4005:3f2:a00:2::/80']);
    assert.deepEqual(prefixesOf(report.prefixDescribe.NetworkInterfaceSets.NetworkInterfaceSet[0]), {
      ipv4: ['10.10.0.16/28', ...assignedV4],
      ipv6: ['2408:4005:3f2:a00:1::/80', ...assignedV6],
    });
    assert.deepEqual(prefixesOf(report.prefixDescribeAfterUnassign.NetworkInterfaceSets.NetworkInterfaceSet[0]), {
      ipv4: ['10.10.0.16/28'],
      ipv6: ['2408:4005:3f2:a00:1::/80'],
    });
  });

  it('maps an API error to the Go SDK error with its code and HTTP status', () => {
    assert.deepEqual(report.unassignAgainError, {
      code: 'InvalidIp.IpUnassigned',
      statusCode: 400,
      type: '*tea.SDKError',
    });
  });

  it('leaves the emulator inventory clean and logs every call as the Go SDK sent it', async () => {
    assert.ok(harness !== undefined);
    const inventory = await harness.emulator.admin.inventory();
    for (const eniId of [report.createNetworkInterface.NetworkInterfaceId, report.prefixCreate.NetworkInterfaceId]) {
      assert.ok(!inventory.networkInterfaces.some((eni) => eni.eniId === eniId), `${eniId} left behind`);
    }
    assert.deepEqual(inventory.ipPrefixes, []);
    assert.equal(inventory.networkInterfaces.filter((eni) => eni.instanceId === DEMO.instanceLargeH).length, 1);
    const entries = await harness.emulator.admin.calls();
    const outcomes = new Map<string, Set<string>>();
    for (const entry of entries) outcomes.set(entry.action, (outcomes.get(entry.action) ?? new Set()).add(entry.code));
    assert.deepEqual(Object.fromEntries([...outcomes].map(([action, codes]) => [action, [...codes].sort()])), {
      DescribeInstanceTypes: ['Success'],
      DescribeVSwitches: ['Success'],
      CreateNetworkInterface: ['Success'],
      AttachNetworkInterface: ['Success'],
      DescribeNetworkInterfaces: ['Success'],
      AssignPrivateIpAddresses: ['Success'],
      UnassignPrivateIpAddresses: ['InvalidIp.IpUnassigned', 'Success'],
      AssignIpv6Addresses: ['Success'],
      UnassignIpv6Addresses: ['Success'],
      DetachNetworkInterface: ['Success'],
      DeleteNetworkInterface: ['Success'],
    });
  });
});
