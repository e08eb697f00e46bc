import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadYaml } from '@kubernetes/client-node';
import {
  ENI_TRAFFIC_MODES,
  ENI_TYPES,
  IP_STATUSES,
  NODE_CR_API_VERSION,
  NODE_CR_GROUP,
  NODE_CR_KIND,
  NODE_CR_PLURAL,
  NODE_CR_VERSION,
  VSWITCH_SELECT_POLICIES,
} from '../../../src/ipam/node-model.js';
import type { NodeCr } from '../../../src/ipam/node-model.js';

/** The subset of an OpenAPI v3 schema node a CRD uses. */
interface Schema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  enum?: unknown[];
  required?: string[];
  minimum?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; listKind: string; plural: string; singular: string };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: Record<string, never> };
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

/** Every field of the model made required, so the sample below must spell out each one. */
type DeepRequired<T> = T extends readonly (infer U)[]
  ? DeepRequired<U>[]
  : T extends object
    ? { [K in keyof T]-?: DeepRequired<T[K]> }
    : T;

/**
 * One CR using every field of `NodeCr`: adding a field to the model without adding it here fails to compile, and
 * the test below then fails unless the CRD has the field too.
 */
const FULL_SAMPLE = {
  apiVersion: NODE_CR_API_VERSION,
  kind: NODE_CR_KIND,
  metadata: {
    name: 'node-a',
    uid: 'uid-a',
    resourceVersion: '1',
    labels: { name: 'node-a' },
    annotations: { a: 'b' },
    finalizers: ['network.alibabacloud.com/node-controller'],
    deletionTimestamp: '2024-10-21T08:00:00Z',
  },
  spec: {
    nodeMetadata: { regionID: 'cn-hangzhou', instanceType: 'ecs.g7.large', instanceID: 'i-1', zoneID: 'cn-hangzhou-k' },
    nodeCap: {
      adapters: 3,
      eriQuantity: 0,
      totalAdapters: 3,
      ipv4PerAdapter: 10,
      ipv6PerAdapter: 10,
      memberAdapterLimit: 0,
      maxMemberAdapterLimit: 0,
      instanceBandwidthRx: 1000,
      instanceBandwidthTx: 1000,
    },
    eni: {
      tag: { k: 'v' },
      tagFilter: { k: 'v' },
      vSwitchOptions: ['vsw-1'],
      securityGroupIDs: ['sg-1'],
      resourceGroupID: 'rg-1',
      enableIPv4: true,
      enableIPv6: true,
      enableERDMA: false,
      enableTrunk: false,
      vSwitchSelectPolicy: 'most',
      tagBlockList: [{ key: 'team', value: 'other' }],
      enableIPPrefix: true,
      ipv4PrefixCount: 2,
      ipv6PrefixCount: 0,
    },
    pool: {
      maxPoolSize: 5,
      minPoolSize: 0,
      poolSyncPeriod: '2m',
      warmUpSize: 10,
      reclaim: { after: '30m', interval: '10m', batchSize: 5, jitterFactor: '0.1' },
    },
    flavor: [{ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'Standard', count: 2 }],
  },
  status: {
    nextSyncOpenAPITime: '2024-10-22T08:00:00Z',
    lastSyncOpenAPITime: '2024-10-21T08:00:00Z',
    lastModifiedTime: '2024-10-21T08:00:00Z',
    nextIdleIPReclaimTime: '2024-10-21T08:40:00Z',
    warmUpTarget: 10,
    warmUpAllocatedCount: 10,
    warmUpCompleted: true,
    networkInterfaces: {
      'eni-1': {
        id: 'eni-1',
        status: 'InUse',
        macAddress: '00:16:3e:00:00:01',
        vSwitchID: 'vsw-1',
        securityGroupIDs: ['sg-1'],
        primaryIPAddress: '10.0.0.2',
        networkInterfaceTrafficMode: 'Standard',
        networkInterfaceType: 'Secondary',
        ipv4: { '10.0.0.3': { ip: '10.0.0.3', primary: false, status: 'Valid', podID: 'ns/pod', podUID: 'uid-p' } },
        ipv6: { 'fd00::3': { ip: 'fd00::3', primary: false, status: 'Valid', podID: 'ns/pod', podUID: 'uid-p' } },
        ipv4CIDR: '10.0.0.0/24',
        ipv6CIDR: 'fd00::/64',
        ipv4Prefix: [{ prefix: '10.0.0.16/28', status: 'Frozen', frozenExpireAt: '2024-10-21T09:00:00Z' }],
        ipv6Prefix: [{ prefix: 'fd00::1:0:0:0/80', status: 'Valid', frozenExpireAt: '2024-10-21T09:00:00Z' }],
        conditions: {
          InsufficientIP: { observedTime: '2024-10-21T08:00:00Z', message: 'm' },
          OperationErr: { observedTime: '2024-10-21T08:00:00Z', message: 'm' },
        },
        unschedulable: false,
      },
    },
  },
} satisfies DeepRequired<NodeCr>;

/**
 * Schema fields only newer Terway versions write. The model leaves them out on
 * purpose: the validator drops them from the typed copy, and the status write lays the controller's ENIs over the
 * raw CR (`mergeNetworkInterfacesOverRaw`), so they survive every write (test/unit/ipam/status-merge.test.ts).
 */
const NEWER_TERWAY_ONLY: Record<string, string> = {
  'spec.nodeCap.networkCardsCount': 'multi network-card instances, read only by newer daemons',
  'spec.nodeCap.networkCards': 'multi network-card instances, read only by newer daemons',
  'spec.datapath': 'read by the daemon only',
  'status.networkInterfaces.*.ipv4.*.ipName': 'EFLO/LingJun backends only',
};

/**
 * Back to the manifest's own field names. loadYaml builds client-node model classes, which rename `enum` to `_enum`
 * and `x-kubernetes-*` to `x_kubernetes_*`, but only below `properties`: `items` and `additionalProperties` are
 * typed `any` and stay as written. Renaming every key (and dropping the classes) gives one uniform shape.
 */
function wireForm(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(wireForm);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .map(([key, item]) => [
        key.startsWith('x_kubernetes_') ? key.replaceAll('_', '-') : key.replace(/^_(enum|default)$/, '$1'),
        wireForm(item),
      ]),
  );
}

const crd = wireForm(
  loadYaml(readFileSync(new URL('../../../deploy/crd/network.alibabacloud.com_nodes.yaml', import.meta.url), 'utf8')),
) as Crd;

function rootSchema(): Schema {
  const [version] = crd.spec.versions;
  assert.ok(version !== undefined);
  return version.schema.openAPIV3Schema;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema node at a dotted path, `*` standing for any map key or list item. */
function schemaAt(path: string): Schema | undefined {
  let schema: Schema | undefined = rootSchema();
  for (const key of path.split('.')) {
    if (schema === undefined) return undefined;
    if (key === '*')
      schema = schema.items ?? (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    else schema = schema.properties?.[key];
  }
  return schema;
}

/** Structural-schema violations below `schema` (see the Kubernetes "structural schema" rules). */
function structuralProblems(schema: Schema, path: string): string[] {
  const problems: string[] = [];
  const preserves = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (schema.type === undefined && !preserves) problems.push(`${path}: no type`);
  if (schema.type === 'object') {
    // Root metadata is the one object Kubernetes validates itself and allows without properties.
    const isRootMetadata = path === '$.metadata';
    if (schema.properties === undefined && schema.additionalProperties === undefined && !preserves && !isRootMetadata) {
      problems.push(`${path}: object without properties, additionalProperties or preserve-unknown-fields`);
    }
    if (schema.properties !== undefined && isObject(schema.additionalProperties)) {
      problems.push(`${path}: both properties and additionalProperties`);
    }
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      problems.push(...structuralProblems(child, `${path}.${key}`));
    }
    if (isObject(schema.additionalProperties)) {
      problems.push(...structuralProblems(schema.additionalProperties, `${path}.*`));
    }
    for (const name of schema.required ?? []) {
      if (schema.properties?.[name] === undefined) problems.push(`${path}: required ${name} is not a property`);
    }
  }
  if (schema.type === 'array') {
    if (schema.items === undefined) problems.push(`${path}: array without items`);
    else problems.push(...structuralProblems(schema.items, `${path}[]`));
  }
  return problems;
}

/** `[path, value]` of every value in the sample below its root, with `*` for map keys and list items. */
function samplePaths(value: unknown, path: string, schema: Schema | undefined): [string, unknown][] {
  const found: [string, unknown][] = [];
  const childrenOf = (): [string, unknown][] => {
    if (Array.isArray(value)) return value.map((item) => ['*', item]);
    if (!isObject(value)) return [];
    const isMap = schema?.properties === undefined && isObject(schema?.additionalProperties);
    return Object.entries(value).map(([key, item]) => [isMap ? '*' : key, item]);
  };
  for (const [key, item] of childrenOf()) {
    const childPath = path === '' ? key : `${path}.${key}`;
    found.push([childPath, item]);
    // metadata is Kubernetes' ObjectMeta: the CRD leaves it to the apiserver, so there is nothing to compare.
    if (childPath !== 'metadata') found.push(...samplePaths(item, childPath, schemaAt(childPath)));
  }
  return found;
}

/** Dotted paths of every property the schema declares under spec and status, `*` for maps and lists. */
function schemaPaths(schema: Schema, path: string): string[] {
  const paths: string[] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const childPath = `${path}.${key}`;
    paths.push(childPath, ...schemaPaths(child, childPath));
  }
  if (isObject(schema.additionalProperties)) paths.push(...schemaPaths(schema.additionalProperties, `${path}.*`));
  if (schema.items !== undefined) paths.push(...schemaPaths(schema.items, `${path}.*`));
  return paths;
}

function jsonTypeMatches(schema: Schema, value: unknown): boolean {
  switch (schema.type ?? '') {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return false;
  }
}

void describe('the Node CRD manifest', () => {
  void it('declares Terway’s group, version, names and cluster scope', () => {
    assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(crd.kind, 'CustomResourceDefinition');
    assert.equal(crd.metadata.name, `${NODE_CR_PLURAL}.${NODE_CR_GROUP}`);
    assert.equal(crd.spec.group, NODE_CR_GROUP);
    assert.equal(crd.spec.scope, 'Cluster');
    assert.deepEqual(crd.spec.names, {
      kind: NODE_CR_KIND,
      listKind: 'NodeList',
      plural: NODE_CR_PLURAL,
      singular: 'node',
    });
    assert.equal(NODE_CR_API_VERSION, `${NODE_CR_GROUP}/${NODE_CR_VERSION}`);
  });

  void it('serves and stores exactly v1beta1, with the status subresource', () => {
    assert.equal(crd.spec.versions.length, 1);
    const [version] = crd.spec.versions;
    assert.equal(version?.name, NODE_CR_VERSION);
    assert.equal(version.served, true);
    assert.equal(version.storage, true);
    assert.deepEqual(version.subresources, { status: {} });
  });

  void it('has a structural schema', () => {
    assert.deepEqual(structuralProblems(rootSchema(), '$'), []);
    assert.deepEqual(Object.keys(rootSchema().properties ?? {}).sort(), [
      'apiVersion',
      'kind',
      'metadata',
      'spec',
      'status',
    ]);
  });

  void it('uses the enum values of the model', () => {
    assert.deepEqual(schemaAt('spec.flavor.*.networkInterfaceType')?.enum, [...ENI_TYPES]);
    assert.deepEqual(schemaAt('spec.flavor.*.networkInterfaceTrafficMode')?.enum, [...ENI_TRAFFIC_MODES]);
    assert.deepEqual(schemaAt('spec.eni.vSwitchSelectPolicy')?.enum, [...VSWITCH_SELECT_POLICIES]);
    assert.deepEqual(schemaAt('status.networkInterfaces.*.ipv4.*.status')?.enum, [...IP_STATUSES]);
    assert.deepEqual(schemaAt('status.networkInterfaces.*.ipv6.*.status')?.enum, [...IP_STATUSES]);
  });

  void it('declares, with the same JSON type, every field of the TypeScript model', () => {
    const missing: string[] = [];
    for (const [path, value] of samplePaths(FULL_SAMPLE, '', rootSchema())) {
      const schema = schemaAt(path);
      if (schema === undefined) missing.push(`${path}: not in the CRD`);
      else if (!jsonTypeMatches(schema, value)) missing.push(`${path}: CRD type ${String(schema.type)}`);
    }
    assert.deepEqual(missing, []);
  });

  void it('has no spec or status field the model lacks, except the newer-Terway-only ones listed', () => {
    const modelPaths = new Set(samplePaths(FULL_SAMPLE, '', rootSchema()).map(([path]) => path));
    const isUnderExcluded = (path: string): boolean =>
      Object.keys(NEWER_TERWAY_ONLY).some((excluded) => path === excluded || path.startsWith(`${excluded}.`));
    const declared = ['spec', 'status'].flatMap((root) => schemaPaths(schemaAt(root) ?? {}, root));
    assert.deepEqual(
      declared.filter((path) => !modelPaths.has(path) && !isUnderExcluded(path)),
      [],
    );
  });

  void it('lists only exclusions that are in the CRD and not in the model', () => {
    const modelPaths = new Set(samplePaths(FULL_SAMPLE, '', rootSchema()).map(([path]) => path));
    for (const path of Object.keys(NEWER_TERWAY_ONLY)) {
      assert.ok(schemaAt(path) !== undefined, `${path} is not in the CRD`);
      assert.ok(!modelPaths.has(path), `${path} is in the model now: drop it from NEWER_TERWAY_ONLY`);
    }
  });
});
