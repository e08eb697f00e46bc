/**
 * Adoption: which ENIs of a node get this cluster's tag (so the RAM policy lets the cluster change them), and what
 * the tag then means to GC. Only an ENI attached to this node's instance and listed in its CR, without any cluster
 * tag, of a kind eniflow manages and not kept unschedulable, is adopted; never another cluster's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { adoptionTags, enisToAdopt, gcRemovalVerdict } from '../../../src/ipam/index.js';
import type { CloudEni, EniSpec } from '../../../src/ipam/index.js';
import { aCloudEni, anEni, anIp, aSpec, enisOf } from './builders.js';

const CLUSTER = 'c-this';
const OTHER = 'c-other';
const INSTANCE = 'i-node-a';
/** The core Node's spec.providerID for this node (kubelet / cloud controller manager, not the daemon). */
const PROVIDER_ID = `cn-hangzhou.${INSTANCE}`;

/** An ENI Terway created and attached to this node's instance (creator=terway, no eniflow tag). */
function terwayEni(eniId: string, overrides: Partial<CloudEni> = {}): CloudEni {
  return aCloudEni(eniId, { instanceId: INSTANCE, tags: { creator: 'terway' }, ...overrides });
}

const eniSpec: EniSpec = aSpec().eni ?? {};

describe('enisToAdopt', () => {
  const table: { name: string; cloud: CloudEni; inCr?: boolean; adopt: boolean }[] = [
    { name: "Terway's ENI, attached here, in the CR", cloud: terwayEni('eni-terway'), adopt: true },
    {
      name: 'an eniflow ENI from before the cluster tag',
      cloud: terwayEni('eni-legacy', { tags: { creator: 'eniflow', 'eniflow.io/node': 'node-a' } }),
      adopt: true,
    },
    { name: 'an ENI with no tag at all', cloud: terwayEni('eni-bare', { tags: {} }), adopt: true },
    { name: 'a Trunk ENI', cloud: terwayEni('eni-trunk', { type: 'Trunk' }), adopt: true },
    {
      name: 'an ENI being released (Deleting in the CR) still attached here',
      cloud: terwayEni('eni-deleting'),
      adopt: true,
    },
    { name: 'not in the CR', cloud: terwayEni('eni-not-in-cr'), inCr: false, adopt: false },
    {
      name: 'attached to another instance (the CR is stale or forged)',
      cloud: terwayEni('eni-elsewhere', { instanceId: 'i-other-cluster-node' }),
      adopt: false,
    },
    {
      name: 'attached nowhere',
      cloud: terwayEni('eni-loose', { instanceId: '', status: 'Available' }),
      adopt: false,
    },
    {
      name: "another cluster's ENI (never claimed)",
      cloud: terwayEni('eni-other', { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': OTHER } }),
      adopt: false,
    },
    {
      name: 'an empty cluster tag is a cluster tag',
      cloud: terwayEni('eni-empty', { tags: { creator: 'terway', 'eniflow.io/cluster-id': '' } }),
      adopt: false,
    },
    {
      name: "already this cluster's",
      cloud: terwayEni('eni-ours', { tags: { creator: 'eniflow', 'eniflow.io/cluster-id': CLUSTER } }),
      adopt: false,
    },
    { name: 'the primary ENI', cloud: terwayEni('eni-primary', { type: 'Primary' }), adopt: false },
    {
      name: "the ERDMA controller's ENI (block list)",
      cloud: terwayEni('eni-erdma', { tags: { creator: 'alibabacloud-erdma-controller' } }),
      adopt: false,
    },
    {
      name: 'a HighPerformance ENI on a node that does not manage ERDMA',
      cloud: terwayEni('eni-hp', { trafficMode: 'HighPerformance' }),
      adopt: false,
    },
  ];
  for (const row of table) {
    it(`${row.adopt ? 'adopts' : 'leaves'} ${row.name}`, () => {
      const crEnis =
        row.inCr === false
          ? {}
          : enisOf(
              anEni(row.cloud.eniId, {
                status: row.cloud.eniId === 'eni-deleting' ? 'Deleting' : 'InUse',
                ipv4: [anIp('10.0.0.2', { pod: 'default/web-1' })],
              }),
            );
      const adopted = enisToAdopt({
        remote: [row.cloud],
        crEnis,
        instanceId: INSTANCE,
        providerId: PROVIDER_ID,
        clusterId: CLUSTER,
        eniSpec,
      });
      assert.deepEqual(adopted, row.adopt ? [row.cloud.eniId] : []);
    });
  }

  it('adopts nothing for a node whose instance is not known yet', () => {
    const cloud = terwayEni('eni-terway', { instanceId: '' });
    const crEnis = enisOf(anEni('eni-terway'));
    assert.deepEqual(
      enisToAdopt({ remote: [cloud], crEnis, instanceId: '', providerId: 'cn-hangzhou.', clusterId: CLUSTER, eniSpec }),
      [],
    );
  });

  it('answers the same sorted ids, once each, whatever order the cloud lists in', () => {
    const remote = [terwayEni('eni-c'), terwayEni('eni-a'), terwayEni('eni-b'), terwayEni('eni-a')];
    const crEnis = enisOf(anEni('eni-a'), anEni('eni-b'), anEni('eni-c'));
    const input = { crEnis, instanceId: INSTANCE, providerId: PROVIDER_ID, clusterId: CLUSTER, eniSpec };
    assert.deepEqual(enisToAdopt({ ...input, remote }), ['eni-a', 'eni-b', 'eni-c']);
    assert.deepEqual(enisToAdopt({ ...input, remote: [...remote].reverse() }), ['eni-a', 'eni-b', 'eni-c']);
  });
});

describe('enisToAdopt needs the core Node to name the instance (the daemon writes the CR)', () => {
  const table: { name: string; providerId: string | undefined; adopt: boolean }[] = [
    { name: "the providerID names the CR's instance", providerId: PROVIDER_ID, adopt: true },
    { name: 'no providerID', providerId: undefined, adopt: false },
    { name: 'an empty providerID', providerId: '', adopt: false },
    { name: 'a providerID naming another instance', providerId: 'cn-hangzhou.i-other-cluster-node', adopt: false },
    { name: 'a providerID only ending with the instance id', providerId: 'cn-hangzhou.xi-node-a', adopt: false },
    { name: 'a providerID without a region', providerId: INSTANCE, adopt: false },
  ];
  for (const row of table) {
    it(`${row.adopt ? 'adopts' : 'adopts nothing'}: ${row.name}`, () => {
      const adopted = enisToAdopt({
        remote: [terwayEni('eni-terway')],
        crEnis: enisOf(anEni('eni-terway')),
        instanceId: INSTANCE,
        providerId: row.providerId,
        clusterId: CLUSTER,
        eniSpec,
      });
      assert.deepEqual(adopted, row.adopt ? ['eni-terway'] : []);
    });
  }
});

describe('adoptionTags', () => {
  it("writes this cluster's id and the node, and leaves the creator tag alone", () => {
    assert.deepEqual(adoptionTags({ clusterId: CLUSTER, nodeName: 'node-a' }), {
      'eniflow.io/cluster-id': CLUSTER,
      'eniflow.io/node': 'node-a',
    });
  });
});

describe('gcRemovalVerdict on an adopted ENI', () => {
  it('removes an adopted ENI of this node once detached, and keeps one not yet adopted', () => {
    const detached = { status: 'Available', instanceId: '' };
    const adopted = terwayEni('eni-adopted', {
      ...detached,
      tags: { creator: 'terway', ...adoptionTags({ clusterId: CLUSTER, nodeName: 'node-a' }) },
    });
    const verdict = (cloud: CloudEni, nodeName = 'node-a') =>
      gcRemovalVerdict({ cloud, instanceId: INSTANCE, nodeName, clusterId: CLUSTER });
    assert.equal(verdict(adopted), 'remove');
    assert.equal(verdict(adopted, 'node-b'), 'notProvablyOurs');
    assert.equal(verdict(terwayEni('eni-terway', detached)), 'notProvablyOurs');
  });
});
