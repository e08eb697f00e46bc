import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { NodeCr, ReadyNodeSpec } from '../../../src/ipam/node-model.js';
import { validateNodeCr } from '../../../src/ipam/validate-node.js';
import type { NodeCrValidation, SpecProblem, UsableNodeCr } from '../../../src/ipam/validate-node.js';

type Json = Record<string, unknown>;

/** A CR as Terway writes it at the seed: every NetworkInterface field present, plus Kubernetes' own metadata. */
function seedNode(): Json {
  return {
    apiVersion: 'network.alibabacloud.com/v1beta1',
    kind: 'Node',
    metadata: {
      name: 'cn-hangzhou.192.168.0.10',
      uid: '0d6f3a51-5f0e-4f43-9a55-1a4f0c3c2b11',
      resourceVersion: '48213',
      generation: 4,
      creationTimestamp: '2024-10-21T08:00:00Z',
      labels: { name: 'cn-hangzhou.192.168.0.10', 'k8s.aliyun.com/exclusive-mode-eni-type': 'default' },
      annotations: { 'crd.network.alibabacloud.com/version': 'v0.2.0' },
      finalizers: ['network.alibabacloud.com/node-controller'],
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Node', name: 'cn-hangzhou.192.168.0.10', uid: 'u', controller: true },
      ],
      managedFields: [{ manager: 'terway-controlplane', operation: 'Update' }],
    },
    spec: {
      nodeMetadata: {
        regionID: 'cn-hangzhou',
        instanceType: 'ecs.g7.xlarge',
        instanceID: 'i-bp1gyj0ug1ak4dqbcnyj',
        zoneID: 'cn-hangzhou-k',
      },
      nodeCap: {
        adapters: 4,
        eriQuantity: 0,
        totalAdapters: 4,
        ipv4PerAdapter: 15,
        ipv6PerAdapter: 15,
        memberAdapterLimit: 0,
        maxMemberAdapterLimit: 0,
        instanceBandwidthRx: 1536000,
        instanceBandwidthTx: 1536000,
      },
      eni: {
        tag: { 'k8s.aliyun.com/cluster': 'c1' },
        tagFilter: { 'k8s.aliyun.com/cluster': 'c1' },
        vSwitchOptions: ['vsw-bp1aaa', 'vsw-bp1bbb'],
        securityGroupIDs: ['sg-bp1ccc'],
        resourceGroupID: 'rg-acfm2',
        enableIPv4: true,
        enableIPv6: true,
        enableERDMA: false,
        enableTrunk: false,
        vSwitchSelectPolicy: 'most',
      },
      pool: { maxPoolSize: 5, minPoolSize: 2 },
      flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 }],
    },
    status: {
      nextSyncOpenAPITime: '2024-10-22T03:17:05Z',
      lastSyncOpenAPITime: '2024-10-21T08:00:00Z',
      networkInterfaces: {
        'eni-bp1aaa': {
          id: 'eni-bp1aaa',
          status: 'InUse',
          macAddress: '00:16:3e:11:22:33',
          vSwitchID: 'vsw-bp1aaa',
          securityGroupIDs: ['sg-bp1ccc'],
          primaryIPAddress: '192.168.0.20',
          networkInterfaceTrafficMode: 'Standard',
          networkInterfaceType: 'Secondary',
          ipv4: {
            '192.168.0.20': { ip: '192.168.0.20', primary: true, status: 'Valid' },
            '192.168.0.21': {
              ip: '192.168.0.21',
              primary: false,
              status: 'Valid',
              podID: 'default/web-0',
              podUID: '6b0b2f8e-9f1a-4c1e-8a51-0d7c2f3a9e10',
            },
            '192.168.0.22': { ip: '192.168.0.22', primary: false, status: 'Deleting' },
          },
          ipv6: {
            '2408:4005:3bc:1::20': { ip: '2408:4005:3bc:1::20', primary: false, status: 'Valid' },
            '2408:4005:3bc:1::21': {
              ip: '2408:4005:3bc:1::21',
              primary: false,
              status: 'Valid',
              podID: 'default/web-0',
              podUID: '6b0b2f8e-9f1a-4c1e-8a51-0d7c2f3a9e10',
            },
          },
          ipv4CIDR: '192.168.0.0/24',
          ipv6CIDR: '2408:4005:3bc:1::/64',
          conditions: {
            InsufficientIP: { observedTime: '2024-10-21T08:01:02Z', message: 'vSwitch vsw-bp1bbb has no free IP' },
          },
        },
        // The rollback record createENI writes: Go's zero values, a nil slice marshalled as null.
        'eni-bp1bbb': {
          id: 'eni-bp1bbb',
          status: 'Deleting',
          macAddress: '',
          vSwitchID: '',
          securityGroupIDs: null,
          primaryIPAddress: '',
          networkInterfaceTrafficMode: '',
          networkInterfaceType: '',
          ipv4CIDR: '',
          ipv6CIDR: '',
        },
      },
    },
  };
}

/** What validateNodeCr returns for seedNode(): Kubernetes' extra metadata and the null slice are gone. */
function seedNodeTyped(): NodeCr {
  const node = seedNode() as unknown as NodeCr & { metadata: Json };
  delete node.metadata['generation'];
  delete node.metadata['creationTimestamp'];
  delete node.metadata['ownerReferences'];
  delete node.metadata['managedFields'];
  const rollback = node.status?.networkInterfaces?.['eni-bp1bbb'] as unknown as Json;
  delete rollback['securityGroupIDs'];
  return node;
}

/** A CR as a newer Terway writes it: optional NetworkInterface fields omitted, newer fields present. */
function newerNode(): Json {
  return {
    apiVersion: 'network.alibabacloud.com/v1beta1',
    kind: 'Node',
    metadata: { name: 'node-b', labels: { name: 'node-b' } },
    spec: {
      nodeMetadata: {
        regionID: 'cn-beijing',
        instanceType: 'ecs.g8i.large',
        instanceID: 'i-2ze1',
        zoneID: 'cn-beijing-l',
      },
      nodeCap: { adapters: 3, ipv4PerAdapter: 10, networkCardsCount: 1, networkCards: [{ index: 0 }] },
      eni: {
        vSwitchOptions: ['vsw-2ze1'],
        securityGroupIDs: ['sg-2ze1'],
        enableIPv4: true,
        vSwitchSelectPolicy: 'random',
        enableIPPrefix: false,
        tagBlockList: [{ key: 'creator', value: 'alibabacloud-erdma-controller' }],
      },
      pool: { maxPoolSize: 5, minPoolSize: 0, poolSyncPeriod: '2m', warmUpSize: 3, reclaim: { after: '1h' } },
      flavor: [
        { networkInterfaceType: 'Trunk', networkInterfaceTrafficMode: 'Standard', count: 1 },
        { networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 1 },
      ],
      datapath: { type: 'datapathv2' },
    },
    status: {
      lastModifiedTime: '2026-07-23T10:00:00Z',
      warmUpTarget: 3,
      warmUpCompleted: true,
      networkInterfaces: {
        'eni-2ze1': {
          id: 'eni-2ze1',
          status: 'InUse',
          unschedulable: false,
          ipv4: { '10.1.0.7': { ip: '10.1.0.7', primary: false, status: 'Invalid', ipName: 'x', podID: 'ns/p' } },
        },
      },
    },
  };
}

function newerNodeTyped(): NodeCr {
  return {
    apiVersion: 'network.alibabacloud.com/v1beta1',
    kind: 'Node',
    metadata: { name: 'node-b', labels: { name: 'node-b' } },
    spec: {
      nodeMetadata: {
        regionID: 'cn-beijing',
        instanceType: 'ecs.g8i.large',
        instanceID: 'i-2ze1',
        zoneID: 'cn-beijing-l',
      },
      nodeCap: { adapters: 3, ipv4PerAdapter: 10 },
      eni: {
        vSwitchOptions: ['vsw-2ze1'],
        securityGroupIDs: ['sg-2ze1'],
        enableIPv4: true,
        vSwitchSelectPolicy: 'random',
        tagBlockList: [{ key: 'creator', value: 'alibabacloud-erdma-controller' }],
        enableIPPrefix: false,
      },
      pool: { maxPoolSize: 5, minPoolSize: 0, poolSyncPeriod: '2m', warmUpSize: 3, reclaim: { after: '1h' } },
      flavor: [
        { networkInterfaceType: 'Trunk', networkInterfaceTrafficMode: 'Standard', count: 1 },
        { networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 1 },
      ],
    },
    status: {
      lastModifiedTime: '2026-07-23T10:00:00Z',
      warmUpTarget: 3,
      warmUpCompleted: true,
      networkInterfaces: {
        'eni-2ze1': {
          id: 'eni-2ze1',
          status: 'InUse',
          ipv4: { '10.1.0.7': { ip: '10.1.0.7', primary: false, status: 'Invalid', podID: 'ns/p' } },
          unschedulable: false,
        },
      },
    },
  };
}

function usable(result: NodeCrValidation): UsableNodeCr {
  assert.ok(result.ok, `expected a usable node, got ${JSON.stringify(result.problems)}`);
  return result;
}

/** The spec a ready, unblocked result hands out, typed ready by narrowing alone (as the node pass reads it). */
function readySpecOf(result: UsableNodeCr): ReadyNodeSpec | undefined {
  if (result.readiness !== 'ready' || result.isBlocked) return undefined;
  return result.node.spec;
}

/** `severity code path` of each problem: compact enough for a table, and order-sensitive. */
function summary(problems: readonly SpecProblem[]): string[] {
  return problems.map((problem) => `${problem.severity} ${problem.code} ${problem.path}`);
}

/** Reads a nested object of a sample; the sample's shape is known, so a miss is a test bug. */
function at(root: Json, ...keys: string[]): Json {
  let current: unknown = root;
  for (const key of keys) current = (current as Json)[key];
  assert.ok(typeof current === 'object' && current !== null, `no object at ${keys.join('.')}`);
  return current as Json;
}

const ENI_A = ['status', 'networkInterfaces', 'eni-bp1aaa'] as const;
const ENI_A_PATH = 'status.networkInterfaces["eni-bp1aaa"]';
const ENI_B_PATH = 'status.networkInterfaces["eni-bp1bbb"]';

interface Row {
  name: string;
  mutate: (cr: Json) => void;
  problems: string[];
  readiness?: 'ready' | 'daemonNotReady';
  /** Checks on the returned node beyond the problem list. */
  check?: (node: NodeCr) => void;
}

const rows: Row[] = [
  {
    name: 'an empty tagFilter key: blocking, before any cloud call can refuse it',
    mutate: (cr) => (at(cr, 'spec', 'eni')['tagFilter'] = { '': 'x', team: 'a' }),
    problems: ['blocking emptyKey spec.eni.tagFilter[""]'],
  },
  {
    name: 'a blank tag key on created ENIs: blocking',
    mutate: (cr) => (at(cr, 'spec', 'eni')['tag'] = { '  ': 'x' }),
    problems: ['blocking emptyKey spec.eni.tag["  "]'],
  },
  {
    name: 'tagBlockList: read, an empty key and a non-object item are blocking',
    mutate: (cr) =>
      (at(cr, 'spec', 'eni')['tagBlockList'] = [{ key: 'team', value: 'db' }, { key: '', value: 'x' }, 'oops']),
    problems: ['blocking emptyKey spec.eni.tagBlockList[1].key', 'blocking invalidType spec.eni.tagBlockList[2]'],
    check: (node) => {
      assert.deepEqual(node.spec.eni?.tagBlockList, [{ key: 'team', value: 'db' }]);
    },
  },
  {
    name: 'an IP outside its ENI CIDR is marked Invalid, as a warning',
    mutate: (cr) =>
      (at(cr, ...ENI_A, 'ipv4')['10.9.9.9'] = { ip: '10.9.9.9', primary: false, status: 'Valid', podID: 'ns/x' }),
    problems: [`warning outsideCidr ${ENI_A_PATH}.ipv4["10.9.9.9"]`],
    check: (node) => {
      assert.equal(node.status?.networkInterfaces?.['eni-bp1aaa']?.ipv4?.['10.9.9.9']?.status, 'Invalid');
    },
  },
  {
    name: 'unschedulable is kept, a non-boolean one dropped with a warning',
    mutate: (cr) => (at(cr, ...ENI_A)['unschedulable'] = 'yes'),
    problems: [`warning invalidType ${ENI_A_PATH}.unschedulable`],
  },
  {
    name: 'spec.eni absent: daemon not ready, reported as info',
    mutate: (cr) => delete at(cr, 'spec')['eni'],
    problems: ['info missing spec.eni'],
    readiness: 'daemonNotReady',
  },
  {
    name: 'spec.pool absent: daemon not ready, reported as info',
    mutate: (cr) => delete at(cr, 'spec')['pool'],
    problems: ['info missing spec.pool'],
    readiness: 'daemonNotReady',
  },
  {
    name: 'spec.eni and spec.pool null: same as absent',
    mutate: (cr) => Object.assign(at(cr, 'spec'), { eni: null, pool: null }),
    problems: ['info missing spec.eni', 'info missing spec.pool'],
    readiness: 'daemonNotReady',
  },
  {
    name: 'negative minPoolSize',
    mutate: (cr) => (at(cr, 'spec', 'pool')['minPoolSize'] = -1),
    problems: ['blocking outOfRange spec.pool.minPoolSize'],
  },
  {
    name: 'non-integer maxPoolSize',
    mutate: (cr) => (at(cr, 'spec', 'pool')['maxPoolSize'] = 2.5),
    problems: ['blocking invalidType spec.pool.maxPoolSize'],
  },
  {
    name: 'maxPoolSize as a string',
    mutate: (cr) => (at(cr, 'spec', 'pool')['maxPoolSize'] = '5'),
    problems: ['blocking invalidType spec.pool.maxPoolSize'],
  },
  {
    name: 'maxPoolSize missing',
    mutate: (cr) => delete at(cr, 'spec', 'pool')['maxPoolSize'],
    problems: ['blocking missing spec.pool.maxPoolSize'],
  },
  {
    name: 'minPoolSize greater than maxPoolSize',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'pool'), { minPoolSize: 7, maxPoolSize: 5 }),
    problems: ['blocking inverted spec.pool.minPoolSize'],
    check: (node) => {
      assert.deepEqual(node.spec.pool, { maxPoolSize: 5, minPoolSize: 7 });
    },
  },
  {
    name: 'warm-up, reclaim and pool period as Terway writes them are kept',
    mutate: (cr) =>
      Object.assign(at(cr, 'spec', 'pool'), {
        poolSyncPeriod: '1m30s',
        warmUpSize: 20,
        reclaim: { after: '30m', interval: '10m', batchSize: 3, jitterFactor: '0.1' },
      }),
    problems: [],
    check: (node) => {
      assert.deepEqual(node.spec.pool, {
        maxPoolSize: 5,
        minPoolSize: 2,
        poolSyncPeriod: '1m30s',
        warmUpSize: 20,
        reclaim: { after: '30m', interval: '10m', batchSize: 3, jitterFactor: '0.1' },
      });
    },
  },
  {
    name: 'negative warmUpSize blocks: the target is set once and for good',
    mutate: (cr) => (at(cr, 'spec', 'pool')['warmUpSize'] = -1),
    problems: ['blocking outOfRange spec.pool.warmUpSize'],
  },
  {
    name: 'reclaim durations that are no Go duration, or negative, block; a negative batch blocks',
    mutate: (cr) =>
      (at(cr, 'spec', 'pool')['reclaim'] = {
        after: '30 minutes',
        interval: '-1m',
        batchSize: -2,
        jitterFactor: '0.2',
      }),
    problems: [
      'blocking malformedDuration spec.pool.reclaim.after',
      'blocking outOfRange spec.pool.reclaim.batchSize',
      'blocking outOfRange spec.pool.reclaim.interval',
    ],
    check: (node) => {
      assert.deepEqual(node.spec.pool?.reclaim, { jitterFactor: '0.2' });
    },
  },
  {
    name: 'a zero reclaim interval blocks (a batch on every pass); a zero after is allowed',
    mutate: (cr) => (at(cr, 'spec', 'pool')['reclaim'] = { after: '0s', interval: '0', batchSize: 1 }),
    problems: ['blocking outOfRange spec.pool.reclaim.interval'],
  },
  {
    name: 'reclaim not an object blocks',
    mutate: (cr) => (at(cr, 'spec', 'pool')['reclaim'] = '30m'),
    problems: ['blocking invalidType spec.pool.reclaim'],
  },
  {
    name: 'a jitterFactor outside [0, 1] or not a number only warns: the default 0.1 is used',
    mutate: (cr) => (at(cr, 'spec', 'pool')['reclaim'] = { after: '1m', batchSize: 1, jitterFactor: '1.5' }),
    problems: ['warning outOfRange spec.pool.reclaim.jitterFactor'],
    check: (node) => {
      assert.deepEqual(node.spec.pool?.reclaim, { after: '1m', batchSize: 1 });
    },
  },
  {
    name: 'a jitterFactor that is no number warns',
    mutate: (cr) => (at(cr, 'spec', 'pool')['reclaim'] = { jitterFactor: 'ten percent' }),
    problems: ['warning outOfRange spec.pool.reclaim.jitterFactor'],
  },
  {
    name: 'a poolSyncPeriod that is no duration only warns: the controller period is used',
    mutate: (cr) => (at(cr, 'spec', 'pool')['poolSyncPeriod'] = '2 minutes'),
    problems: ['warning malformedDuration spec.pool.poolSyncPeriod'],
    check: (node) => {
      assert.equal(node.spec.pool?.poolSyncPeriod, undefined);
    },
  },
  {
    name: 'malformed warm-up and reclaim status fields warn and are dropped',
    mutate: (cr) =>
      Object.assign(at(cr, 'status'), {
        warmUpTarget: -3,
        warmUpAllocatedCount: 'many',
        warmUpCompleted: 'yes',
        lastModifiedTime: 'yesterday',
        nextIdleIPReclaimTime: '2026-01-01T00:00:00Z',
      }),
    problems: [
      'warning malformedTime status.lastModifiedTime',
      'warning invalidType status.warmUpAllocatedCount',
      'warning invalidType status.warmUpCompleted',
      'warning outOfRange status.warmUpTarget',
    ],
    check: (node) => {
      assert.equal(node.status?.nextIdleIPReclaimTime, '2026-01-01T00:00:00Z');
      assert.equal(node.status?.warmUpTarget, undefined);
    },
  },
  {
    name: 'spec.pool not an object',
    mutate: (cr) => (at(cr, 'spec')['pool'] = 'big'),
    problems: ['blocking invalidType spec.pool'],
  },
  {
    name: 'flavor with an unknown networkInterfaceType',
    mutate: (cr) => ((at(cr, 'spec')['flavor'] as Json[])[0] = { ...flavorEntry(), networkInterfaceType: 'Eflo' }),
    problems: ['blocking unknownValue spec.flavor[0].networkInterfaceType'],
    check: (node) => {
      assert.deepEqual(node.spec.flavor, []);
    },
  },
  {
    name: 'flavor with an unknown networkInterfaceTrafficMode',
    mutate: (cr) =>
      ((at(cr, 'spec')['flavor'] as Json[])[0] = { ...flavorEntry(), networkInterfaceTrafficMode: 'Fast' }),
    problems: ['blocking unknownValue spec.flavor[0].networkInterfaceTrafficMode'],
  },
  {
    name: 'flavor with a negative count',
    mutate: (cr) => ((at(cr, 'spec')['flavor'] as Json[])[0] = { ...flavorEntry(), count: -1 }),
    problems: ['blocking outOfRange spec.flavor[0].count'],
  },
  {
    name: 'flavor with a non-integer count, and a later entry that is not an object',
    mutate: (cr) => (at(cr, 'spec')['flavor'] = [{ ...flavorEntry(), count: 0.5 }, flavorEntry(), 3]),
    problems: ['blocking invalidType spec.flavor[0].count', 'blocking invalidType spec.flavor[2]'],
    check: (node) => {
      assert.deepEqual(node.spec.flavor, [flavorEntry()]);
    },
  },
  {
    name: 'flavor entry missing its fields',
    mutate: (cr) => (at(cr, 'spec')['flavor'] = [{}]),
    problems: [
      'blocking missing spec.flavor[0].count',
      'blocking missing spec.flavor[0].networkInterfaceTrafficMode',
      'blocking missing spec.flavor[0].networkInterfaceType',
    ],
  },
  {
    name: 'flavor not a list',
    mutate: (cr) => (at(cr, 'spec')['flavor'] = { count: 1 }),
    problems: ['blocking invalidType spec.flavor'],
  },
  {
    name: 'unknown vSwitchSelectPolicy: a warning, the field is dropped',
    mutate: (cr) => (at(cr, 'spec', 'eni')['vSwitchSelectPolicy'] = 'cheapest'),
    problems: ['warning unknownValue spec.eni.vSwitchSelectPolicy'],
    check: (node) => {
      assert.equal(node.spec.eni?.vSwitchSelectPolicy, undefined);
    },
  },
  {
    name: 'enableIPv4 and enableIPv6 both false',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'eni'), { enableIPv4: false, enableIPv6: false }),
    problems: ['blocking noIpFamily spec.eni'],
  },
  {
    name: 'enableIPv4 and enableIPv6 both absent',
    mutate: (cr) => {
      delete at(cr, 'spec', 'eni')['enableIPv4'];
      delete at(cr, 'spec', 'eni')['enableIPv6'];
    },
    problems: ['blocking noIpFamily spec.eni'],
  },
  {
    name: 'IPv6 only is fine',
    mutate: (cr) => (at(cr, 'spec', 'eni')['enableIPv4'] = false),
    problems: [],
  },
  {
    name: 'enableIPv4 not a boolean',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'eni'), { enableIPv4: 'true', enableIPv6: false }),
    problems: ['blocking noIpFamily spec.eni', 'blocking invalidType spec.eni.enableIPv4'],
  },
  {
    name: 'garbled ENI tags, vSwitch list and resource group',
    mutate: (cr) =>
      Object.assign(at(cr, 'spec', 'eni'), {
        tag: { a: 1 },
        tagFilter: ['a'],
        vSwitchOptions: 'vsw-1',
        securityGroupIDs: [1],
        resourceGroupID: 7,
      }),
    problems: [
      'blocking invalidType spec.eni.resourceGroupID',
      'blocking invalidType spec.eni.securityGroupIDs',
      'blocking invalidType spec.eni.tag',
      'blocking invalidType spec.eni.tagFilter',
      'blocking invalidType spec.eni.vSwitchOptions',
    ],
  },
  {
    name: 'IP prefix mode is accepted with its counts',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'eni'), { enableIPPrefix: true, ipv4PrefixCount: 4 }),
    problems: [],
    check: (node) => {
      assert.equal(node.spec.eni?.enableIPPrefix, true);
      assert.equal(node.spec.eni?.ipv4PrefixCount, 4);
    },
  },
  {
    name: 'prefix mode with a negative or garbled count blocks',
    mutate: (cr) =>
      Object.assign(at(cr, 'spec', 'eni'), { enableIPPrefix: true, ipv4PrefixCount: -1, ipv6PrefixCount: '1' }),
    problems: ['blocking outOfRange spec.eni.ipv4PrefixCount', 'blocking invalidType spec.eni.ipv6PrefixCount'],
  },
  {
    name: 'a garbled count outside prefix mode is only a warning',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'eni'), { ipv4PrefixCount: 'many' }),
    problems: ['warning invalidType spec.eni.ipv4PrefixCount'],
  },
  {
    name: 'enableIPPrefix not a boolean blocks',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'eni'), { enableIPPrefix: 'yes' }),
    problems: ['blocking invalidType spec.eni.enableIPPrefix'],
  },
  {
    name: 'an IPv6-only node takes at most one IPv6 prefix',
    mutate: (cr) =>
      Object.assign(at(cr, 'spec', 'eni'), { enableIPv4: false, enableIPPrefix: true, ipv6PrefixCount: 2 }),
    problems: ['blocking outOfRange spec.eni.ipv6PrefixCount'],
  },
  {
    name: 'a dual-stack node ignores ipv6PrefixCount above one (one per ENI is automatic)',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'eni'), { enableIPPrefix: true, ipv6PrefixCount: 3 }),
    problems: [],
  },
  {
    name: 'spec.eni not an object',
    mutate: (cr) => (at(cr, 'spec')['eni'] = ['x']),
    problems: ['blocking invalidType spec.eni'],
  },
  {
    name: 'spec.nodeCap missing',
    mutate: (cr) => delete at(cr, 'spec')['nodeCap'],
    problems: ['blocking missing spec.nodeCap'],
  },
  {
    name: 'nodeCap with zero adapters and negative ipv4PerAdapter',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'nodeCap'), { adapters: 0, ipv4PerAdapter: -3 }),
    problems: ['blocking outOfRange spec.nodeCap.adapters', 'blocking outOfRange spec.nodeCap.ipv4PerAdapter'],
  },
  {
    name: 'nodeCap.ipv6PerAdapter zero with IPv6 enabled',
    mutate: (cr) => (at(cr, 'spec', 'nodeCap')['ipv6PerAdapter'] = 0),
    problems: ['blocking outOfRange spec.nodeCap.ipv6PerAdapter'],
  },
  {
    name: 'nodeCap.ipv6PerAdapter missing with IPv6 enabled',
    mutate: (cr) => delete at(cr, 'spec', 'nodeCap')['ipv6PerAdapter'],
    problems: ['blocking missing spec.nodeCap.ipv6PerAdapter'],
  },
  {
    name: 'nodeCap.ipv6PerAdapter zero without IPv6 is fine',
    mutate: (cr) => {
      at(cr, 'spec', 'nodeCap')['ipv6PerAdapter'] = 0;
      at(cr, 'spec', 'eni')['enableIPv6'] = false;
    },
    problems: [],
  },
  {
    name: 'optional nodeCap fields of the wrong type are warnings',
    mutate: (cr) => Object.assign(at(cr, 'spec', 'nodeCap'), { eriQuantity: '1', totalAdapters: -1 }),
    problems: ['warning invalidType spec.nodeCap.eriQuantity', 'warning outOfRange spec.nodeCap.totalAdapters'],
    check: (node) => {
      assert.equal(node.spec.nodeCap?.eriQuantity, undefined);
    },
  },
  {
    name: 'nodeMetadata.instanceID missing and zoneID empty',
    mutate: (cr) => {
      delete at(cr, 'spec', 'nodeMetadata')['instanceID'];
      at(cr, 'spec', 'nodeMetadata')['zoneID'] = '';
    },
    problems: ['blocking missing spec.nodeMetadata.instanceID', 'blocking missing spec.nodeMetadata.zoneID'],
  },
  {
    name: 'nodeMetadata missing',
    mutate: (cr) => delete at(cr, 'spec')['nodeMetadata'],
    problems: ['blocking missing spec.nodeMetadata'],
  },
  {
    name: 'nodeMetadata.regionID of the wrong type is a warning',
    mutate: (cr) => (at(cr, 'spec', 'nodeMetadata')['regionID'] = 1),
    problems: ['warning invalidType spec.nodeMetadata.regionID'],
  },
  {
    name: 'spec missing entirely',
    mutate: (cr) => delete cr['spec'],
    problems: [
      'info missing spec.eni',
      'blocking missing spec.nodeCap',
      'blocking missing spec.nodeMetadata',
      'info missing spec.pool',
    ],
    readiness: 'daemonNotReady',
  },
  {
    name: 'spec not an object',
    mutate: (cr) => (cr['spec'] = 'x'),
    problems: [
      'blocking invalidType spec',
      'info missing spec.eni',
      'blocking missing spec.nodeCap',
      'blocking missing spec.nodeMetadata',
      'info missing spec.pool',
    ],
    readiness: 'daemonNotReady',
  },
  {
    name: 'ENI key differs from its id, no pod bound: the ENI is dropped with a warning',
    mutate: (cr) => (at(cr, 'status', 'networkInterfaces', 'eni-bp1bbb')['id'] = 'eni-other'),
    problems: [`warning keyMismatch ${ENI_B_PATH}.id`],
    check: (node) => {
      assert.deepEqual(Object.keys(node.status?.networkInterfaces ?? {}), ['eni-bp1aaa']);
    },
  },
  {
    name: 'ENI key differs from its id with a pod bound: blocking',
    mutate: (cr) => (at(cr, ...ENI_A)['id'] = 'eni-other'),
    problems: [`blocking keyMismatch ${ENI_A_PATH}.id`],
  },
  {
    name: 'ENI without id and status',
    mutate: (cr) => {
      delete at(cr, 'status', 'networkInterfaces', 'eni-bp1bbb')['id'];
      delete at(cr, 'status', 'networkInterfaces', 'eni-bp1bbb')['status'];
    },
    problems: [`warning missing ${ENI_B_PATH}.id`, `warning missing ${ENI_B_PATH}.status`],
  },
  {
    name: 'ENI type of the wrong type on a bound ENI',
    mutate: (cr) => (at(cr, ...ENI_A)['networkInterfaceType'] = 1),
    problems: [`blocking invalidType ${ENI_A_PATH}.networkInterfaceType`],
  },
  {
    name: 'ENI entry not an object',
    mutate: (cr) => (at(cr, 'status', 'networkInterfaces')['eni-bp1bbb'] = 'gone'),
    problems: [`blocking invalidType ${ENI_B_PATH}`],
  },
  {
    name: 'ipv4 map not an object: bindings unknown, blocking',
    mutate: (cr) => (at(cr, 'status', 'networkInterfaces', 'eni-bp1bbb')['ipv4'] = ['10.0.0.1']),
    problems: [`blocking invalidType ${ENI_B_PATH}.ipv4`],
  },
  {
    name: 'idle IP whose key is not an IP: dropped with a warning, the rest kept',
    mutate: (cr) => (at(cr, ...ENI_A, 'ipv4')['nope'] = { ip: 'nope', primary: false, status: 'Valid' }),
    problems: [`warning malformedIp ${ENI_A_PATH}.ipv4["nope"]`],
    check: (node) => {
      assert.deepEqual(Object.keys(node.status?.networkInterfaces?.['eni-bp1aaa']?.ipv4 ?? {}), [
        '192.168.0.20',
        '192.168.0.21',
        '192.168.0.22',
      ]);
    },
  },
  {
    name: 'bound IP whose key is not an IP: blocking',
    mutate: (cr) =>
      (at(cr, ...ENI_A, 'ipv4')['1.2.3'] = { ip: '1.2.3', primary: false, status: 'Valid', podID: 'a/b' }),
    problems: [`blocking malformedIp ${ENI_A_PATH}.ipv4["1.2.3"]`],
  },
  {
    name: 'IPv6 address in the ipv4 map and IPv4 address in the ipv6 map',
    mutate: (cr) => {
      at(cr, ...ENI_A, 'ipv4')['fd00::1'] = { ip: 'fd00::1', primary: false, status: 'Valid' };
      at(cr, ...ENI_A, 'ipv6')['10.0.0.1'] = { ip: '10.0.0.1', primary: false, status: 'Valid' };
    },
    problems: [
      `warning wrongFamily ${ENI_A_PATH}.ipv4["fd00::1"]`,
      `warning wrongFamily ${ENI_A_PATH}.ipv6["10.0.0.1"]`,
    ],
  },
  {
    name: 'IP entry whose ip differs from its key',
    mutate: (cr) => (at(cr, ...ENI_A, 'ipv4', '192.168.0.22')['ip'] = '192.168.0.23'),
    problems: [`warning keyMismatch ${ENI_A_PATH}.ipv4["192.168.0.22"].ip`],
  },
  {
    name: 'bound IP with an unknown status',
    mutate: (cr) => (at(cr, ...ENI_A, 'ipv4', '192.168.0.21')['status'] = 'Frozen'),
    problems: [`blocking unknownValue ${ENI_A_PATH}.ipv4["192.168.0.21"].status`],
  },
  {
    name: 'IP entry missing primary and with a garbled podID',
    mutate: (cr) => {
      delete at(cr, ...ENI_A, 'ipv4', '192.168.0.22')['primary'];
      at(cr, ...ENI_A, 'ipv4', '192.168.0.20')['podID'] = 5;
    },
    problems: [
      `blocking invalidType ${ENI_A_PATH}.ipv4["192.168.0.20"].podID`,
      `warning missing ${ENI_A_PATH}.ipv4["192.168.0.22"].primary`,
    ],
  },
  {
    name: 'prefix lists are read with their statuses and expiry',
    mutate: (cr) =>
      Object.assign(at(cr, ...ENI_A), {
        ipv4Prefix: [
          { prefix: '192.168.0.16/28', status: 'Valid' },
          { prefix: '192.168.0.32/28', status: 'Frozen', frozenExpireAt: '2024-10-21T09:00:00Z' },
        ],
        ipv6Prefix: [{ prefix: '2408:4005:3bc:1:1::/80', status: 'Deleting' }],
      }),
    problems: [],
    check: (node) => {
      const eni = node.status?.networkInterfaces?.['eni-bp1aaa'];
      assert.deepEqual(eni?.ipv4Prefix, [
        { prefix: '192.168.0.16/28', status: 'Valid' },
        { prefix: '192.168.0.32/28', status: 'Frozen', frozenExpireAt: '2024-10-21T09:00:00Z' },
      ]);
      assert.deepEqual(eni?.ipv6Prefix, [{ prefix: '2408:4005:3bc:1:1::/80', status: 'Deleting' }]);
    },
  },
  {
    name: 'a malformed prefix entry blocks the node and keeps the ENI',
    mutate: (cr) =>
      Object.assign(at(cr, ...ENI_A), {
        ipv4Prefix: [{ prefix: '192.168.0.16/28', status: 'Reserved' }, { prefix: 'fd00::/80', status: 'Valid' }, 'x'],
        ipv6Prefix: { prefix: 'fd00::/80' },
      }),
    problems: [
      `blocking unknownValue ${ENI_A_PATH}.ipv4Prefix[0].status`,
      `blocking wrongFamily ${ENI_A_PATH}.ipv4Prefix[1].prefix`,
      `blocking invalidType ${ENI_A_PATH}.ipv4Prefix[2]`,
      `blocking invalidType ${ENI_A_PATH}.ipv6Prefix`,
    ],
    check: (node) => {
      assert.ok(node.status?.networkInterfaces?.['eni-bp1aaa'] !== undefined);
    },
  },
  {
    name: 'a malformed frozenExpireAt is a warning: the prefix stays Frozen without expiry',
    mutate: (cr) =>
      Object.assign(at(cr, ...ENI_A), {
        ipv4Prefix: [{ prefix: '192.168.0.16/28', status: 'Frozen', frozenExpireAt: 'soon' }],
      }),
    problems: [`warning malformedTime ${ENI_A_PATH}.ipv4Prefix[0].frozenExpireAt`],
    check: (node) => {
      assert.deepEqual(node.status?.networkInterfaces?.['eni-bp1aaa']?.ipv4Prefix, [
        { prefix: '192.168.0.16/28', status: 'Frozen' },
      ]);
    },
  },
  {
    name: 'IP entry not an object',
    mutate: (cr) => (at(cr, ...ENI_A, 'ipv6')['fd00::9'] = true),
    problems: [`blocking invalidType ${ENI_A_PATH}.ipv6["fd00::9"]`],
  },
  {
    name: 'malformed ipv4CIDR and an IPv4 ipv6CIDR: warnings, fields dropped',
    mutate: (cr) => Object.assign(at(cr, ...ENI_A), { ipv4CIDR: '192.168.0.0/33', ipv6CIDR: '10.0.0.0/8' }),
    problems: [`warning malformedCidr ${ENI_A_PATH}.ipv4CIDR`, `warning wrongFamily ${ENI_A_PATH}.ipv6CIDR`],
    check: (node) => {
      assert.equal(node.status?.networkInterfaces?.['eni-bp1aaa']?.ipv4CIDR, undefined);
      assert.equal(node.status?.networkInterfaces?.['eni-bp1aaa']?.ipv6CIDR, undefined);
    },
  },
  {
    name: 'descriptive ENI fields of the wrong type are dropped with warnings',
    mutate: (cr) => Object.assign(at(cr, ...ENI_A), { macAddress: 1, securityGroupIDs: 'sg' }),
    problems: [`warning invalidType ${ENI_A_PATH}.macAddress`, `warning invalidType ${ENI_A_PATH}.securityGroupIDs`],
  },
  {
    name: 'bad conditions are dropped with warnings',
    mutate: (cr) =>
      (at(cr, ...ENI_A)['conditions'] = {
        Unknown: { observedTime: '2024-10-21T08:01:02Z', message: 'm' },
        InsufficientIP: { observedTime: 'yesterday', message: 'm' },
        OperationErr: 'boom',
      }),
    problems: [
      `warning malformedTime ${ENI_A_PATH}.conditions["InsufficientIP"].observedTime`,
      `warning invalidType ${ENI_A_PATH}.conditions["OperationErr"]`,
      `warning unknownValue ${ENI_A_PATH}.conditions["Unknown"]`,
    ],
    check: (node) => {
      assert.deepEqual(node.status?.networkInterfaces?.['eni-bp1aaa']?.conditions, {});
    },
  },
  {
    name: 'condition without a message',
    mutate: (cr) => (at(cr, ...ENI_A)['conditions'] = { OperationErr: { observedTime: '2024-10-21T08:01:02Z' } }),
    problems: [`warning missing ${ENI_A_PATH}.conditions["OperationErr"].message`],
  },
  {
    name: 'malformed sync times are dropped with warnings',
    mutate: (cr) => Object.assign(at(cr, 'status'), { nextSyncOpenAPITime: 'soon', lastSyncOpenAPITime: 0 }),
    problems: ['warning invalidType status.lastSyncOpenAPITime', 'warning malformedTime status.nextSyncOpenAPITime'],
    check: (node) => {
      assert.deepEqual(Object.keys(node.status ?? {}), ['networkInterfaces']);
    },
  },
  {
    name: 'status not an object',
    mutate: (cr) => (cr['status'] = []),
    problems: ['blocking invalidType status'],
    check: (node) => {
      assert.equal(node.status, undefined);
    },
  },
  {
    name: 'networkInterfaces not an object',
    mutate: (cr) => (at(cr, 'status')['networkInterfaces'] = 'x'),
    problems: ['blocking invalidType status.networkInterfaces'],
  },
  {
    name: 'garbled metadata fields are blocking',
    mutate: (cr) => Object.assign(at(cr, 'metadata'), { labels: 'x', finalizers: [1], uid: 2 }),
    problems: [
      'blocking invalidType metadata.finalizers',
      'blocking invalidType metadata.labels',
      'blocking invalidType metadata.uid',
    ],
  },
  {
    name: 'deletionTimestamp is kept even when malformed',
    mutate: (cr) => (at(cr, 'metadata')['deletionTimestamp'] = 'now'),
    problems: ['warning malformedTime metadata.deletionTimestamp'],
    check: (node) => {
      assert.equal(node.metadata.deletionTimestamp, 'now');
    },
  },
  {
    name: 'apiVersion and kind missing are filled in',
    mutate: (cr) => {
      delete cr['apiVersion'];
      delete cr['kind'];
    },
    problems: ['warning missing apiVersion', 'warning missing kind'],
    check: (node) => {
      assert.equal(node.apiVersion, 'network.alibabacloud.com/v1beta1');
    },
  },
];

function flavorEntry(): Json {
  return { networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 3 };
}

/** Asserts every object and array in `value` is a plain JSON one (no class instances, no shared prototypes). */
function assertPlainJson(value: unknown, path = '$'): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      assertPlainJson(item, `${path}[${index}]`);
    });
    return;
  }
  if (typeof value === 'object' && value !== null) {
    assert.equal(Object.getPrototypeOf(value), Object.prototype, `${path} is not a plain object`);
    for (const [key, item] of Object.entries(value)) assertPlainJson(item, `${path}.${key}`);
    return;
  }
  assert.ok(['string', 'number', 'boolean'].includes(typeof value), `${path} is ${typeof value}`);
}

/** Every object reachable from `value`, to check the output shares none with the input. */
function objectsOf(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value === 'object' && value !== null) {
    found.add(value);
    for (const item of Object.values(value)) objectsOf(item, found);
  }
  return found;
}

function assertSortedByPath(problems: readonly SpecProblem[]): void {
  const paths = problems.map((problem) => problem.path);
  assert.deepEqual(paths, [...paths].sort());
}

void describe('validateNodeCr', () => {
  void it('accepts a seed-shape CR with every field and returns only the model fields', () => {
    const raw = seedNode();
    const result = usable(validateNodeCr(raw));
    assert.deepEqual(result.problems, []);
    assert.equal(result.readiness, 'ready');
    assert.equal(result.isBlocked, false);
    assert.deepEqual(result.node, seedNodeTyped());
    assertPlainJson(result.node);
  });

  void it('accepts a newer-shape CR with optional fields omitted and drops the fields it does not know', () => {
    const result = usable(validateNodeCr(newerNode()));
    assert.deepEqual(result.problems, []);
    assert.equal(result.readiness, 'ready');
    assert.deepEqual(result.node, newerNodeTyped());
  });

  void it('copies instead of aliasing the input', () => {
    const raw = seedNode();
    const result = usable(validateNodeCr(raw));
    const inputObjects = objectsOf(raw);
    for (const object of objectsOf(result.node)) assert.ok(!inputObjects.has(object), 'output shares an object');
    assert.deepEqual(raw, seedNode());
  });

  for (const row of rows) {
    void it(row.name, () => {
      const raw = seedNode();
      row.mutate(raw);
      const result = usable(validateNodeCr(raw));
      assert.deepEqual(summary(result.problems), row.problems);
      assert.equal(result.readiness, row.readiness ?? 'ready');
      assert.equal(
        result.isBlocked,
        row.problems.some((problem) => problem.startsWith('blocking')),
      );
      for (const problem of result.problems) assert.match(problem.message, /\S/);
      assertSortedByPath(result.problems);
      assertPlainJson(result.node);
      const ready = readySpecOf(result);
      assert.equal(ready !== undefined, result.readiness === 'ready' && !result.isBlocked);
      if (ready !== undefined) assert.ok(ready.eni !== undefined && ready.pool !== undefined);
      row.check?.(result.node);
    });
  }

  const unusableRows: { name: string; raw: unknown; problem: string }[] = [
    { name: 'not an object', raw: 'node', problem: 'blocking invalidType ' },
    { name: 'an array', raw: [seedNode()], problem: 'blocking invalidType ' },
    { name: 'null', raw: null, problem: 'blocking invalidType ' },
    { name: 'a core Node', raw: { ...seedNode(), apiVersion: 'v1' }, problem: 'blocking unknownValue apiVersion' },
    { name: 'another kind', raw: { ...seedNode(), kind: 'NodeList' }, problem: 'blocking unknownValue kind' },
    { name: 'no metadata', raw: { ...seedNode(), metadata: undefined }, problem: 'blocking missing metadata' },
    { name: 'metadata not an object', raw: { ...seedNode(), metadata: 'm' }, problem: 'blocking invalidType metadata' },
    { name: 'no name', raw: { ...seedNode(), metadata: {} }, problem: 'blocking missing metadata.name' },
    {
      name: 'a numeric name',
      raw: { ...seedNode(), metadata: { name: 7 } },
      problem: 'blocking invalidType metadata.name',
    },
    {
      name: 'empty name',
      raw: { ...seedNode(), metadata: { name: '' } },
      problem: 'blocking missing metadata.name',
    },
  ];
  for (const row of unusableRows) {
    void it(`refuses a CR that is ${row.name}`, () => {
      const result = validateNodeCr(row.raw);
      assert.equal(result.ok, false);
      assert.deepEqual(summary(result.problems), [row.problem]);
    });
  }

  void it('keeps a "__proto__" map key as data', () => {
    const raw = seedNode();
    const labels = JSON.parse('{"__proto__": "x", "a": "b"}') as unknown;
    at(raw, 'metadata')['labels'] = labels;
    const result = usable(validateNodeCr(raw));
    assert.deepEqual(Object.keys(result.node.metadata.labels ?? {}), ['__proto__', 'a']);
    assertPlainJson(result.node);
  });

  void it('shows long values shortened in messages', () => {
    const raw = seedNode();
    at(raw, 'spec', 'eni')['vSwitchSelectPolicy'] = 'x'.repeat(500);
    const [problem] = usable(validateNodeCr(raw)).problems;
    assert.ok(problem !== undefined && problem.message.length < 200, problem?.message);
  });

  void it('never throws on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const result = validateNodeCr(value);
        assertSortedByPath(result.problems);
      }),
      { numRuns: 500 },
    );
  });

  void it('never throws on mutations of a valid CR, and its output validates again to the same node', () => {
    const paths = leafPaths(seedNode());
    const mutation = fc.record({
      path: fc.constantFrom(...paths),
      depth: fc.nat(),
      value: fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        const raw = seedNode();
        for (const { path, depth, value } of mutations) setAt(raw, path.slice(0, 1 + (depth % path.length)), value);
        const result = validateNodeCr(raw);
        assertSortedByPath(result.problems);
        if (!result.ok) return;
        assertPlainJson(result.node);
        assert.equal(
          result.isBlocked,
          result.problems.some((problem) => problem.severity === 'blocking'),
        );
        const ready = readySpecOf(result);
        if (ready !== undefined) assert.ok(ready.eni !== undefined && ready.pool !== undefined);
        const again = usable(validateNodeCr(JSON.parse(JSON.stringify(result.node))));
        assert.deepEqual(again.node, result.node);
        const warnings = again.problems.filter(
          (problem) => problem.severity === 'warning' && problem.path !== 'metadata.deletionTimestamp',
        );
        assert.deepEqual(warnings, []);
      }),
      { numRuns: 1000 },
    );
  });
});

void describe('validateNodeCr: the ready result', () => {
  const readyRows: { name: string; mutate: (cr: Json) => void; kind: 'ready' | 'blocked' | 'waiting' }[] = [
    { name: 'a valid CR', mutate: () => undefined, kind: 'ready' },
    {
      name: 'a warning only (an ENI without pods dropped)',
      mutate: (cr) => (at(cr, 'status', 'networkInterfaces', 'eni-bp1bbb')['id'] = 'x'),
      kind: 'ready',
    },
    { name: 'spec.eni absent', mutate: (cr) => delete at(cr, 'spec')['eni'], kind: 'waiting' },
    { name: 'spec.pool null', mutate: (cr) => (at(cr, 'spec')['pool'] = null), kind: 'waiting' },
    {
      name: 'spec.pool absent and spec.eni unreadable',
      mutate: (cr) => Object.assign(at(cr, 'spec'), { pool: undefined, eni: 'x' }),
      kind: 'waiting',
    },
    { name: 'spec.eni not an object', mutate: (cr) => (at(cr, 'spec')['eni'] = 'x'), kind: 'blocked' },
    { name: 'spec.pool without its bounds', mutate: (cr) => (at(cr, 'spec')['pool'] = {}), kind: 'blocked' },
    { name: 'inverted pool bounds', mutate: (cr) => (at(cr, 'spec', 'pool')['minPoolSize'] = 99), kind: 'blocked' },
    { name: 'no instance id', mutate: (cr) => delete at(cr, 'spec', 'nodeMetadata')['instanceID'], kind: 'blocked' },
  ];
  for (const row of readyRows) {
    void it(`${row.name}: ${row.kind}`, () => {
      const raw = seedNode();
      row.mutate(raw);
      const result = usable(validateNodeCr(raw));
      const kind = result.readiness === 'daemonNotReady' ? 'waiting' : result.isBlocked ? 'blocked' : 'ready';
      assert.equal(kind, row.kind, JSON.stringify(summary(result.problems)));
      const ready = readySpecOf(result);
      if (row.kind !== 'ready') {
        assert.equal(ready, undefined);
        return;
      }
      // The whole spec as read comes back, eni and pool included: the pass needs no other source and no cast.
      assert.deepEqual(ready, result.node.spec);
      assert.deepEqual(ready?.eni, seedNodeTyped().spec.eni);
      assert.deepEqual(ready?.pool, seedNodeTyped().spec.pool);
    });
  }
});

/** Key paths of every value in a JSON tree (objects and leaves alike). */
function leafPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null) return [prefix];
  const nested = Object.entries(value).flatMap(([key, item]) => leafPaths(item, [...prefix, key]));
  return prefix.length === 0 ? nested : [prefix, ...nested];
}

/** Sets (or deletes, for `undefined`) the value at a key path, if its parent still exists. */
function setAt(root: Json, path: readonly string[], value: unknown): void {
  let parent: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return;
    parent = (parent as Json)[key];
  }
  const last = path[path.length - 1];
  if (typeof parent !== 'object' || parent === null || last === undefined) return;
  if (value === undefined) delete (parent as Json)[last];
  else (parent as Json)[last] = value;
}
