import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  eniFromCloud,
  forgetEni,
  forgetIps,
  mergeOpenApiEnis,
  recordAssignedIps,
  recordCreatedEni,
  recordEniForDeletion,
} from '../../../src/ipam/index.js';
import { aCloudEni, anEni, anIp, enisOf } from './builders.js';

const CIDRS = { 'vsw-a': { ipv4Cidr: '10.0.0.0/24', ipv6Cidr: 'fd00::/64' } };

describe('eniFromCloud', () => {
  it('builds the CR record with Valid IPs and the vSwitch CIDRs', () => {
    assert.deepEqual(eniFromCloud({ cloud: aCloudEni('eni-1'), cidrs: CIDRS['vsw-a'] }), {
      id: 'eni-1',
      status: 'InUse',
      macAddress: '00:16:3e:aa:bb:cc',
      vSwitchID: 'vsw-a',
      securityGroupIDs: ['sg-1', 'sg-2'],
      primaryIPAddress: '10.0.0.1',
      networkInterfaceTrafficMode: 'Standard',
      networkInterfaceType: 'Secondary',
      ipv4: {
        '10.0.0.1': { ip: '10.0.0.1', primary: true, status: 'Valid' },
        '10.0.0.2': { ip: '10.0.0.2', primary: false, status: 'Valid' },
      },
      ipv6: { 'fd00::1': { ip: 'fd00::1', primary: false, status: 'Valid' } },
      ipv4CIDR: '10.0.0.0/24',
      ipv6CIDR: 'fd00::/64',
    });
  });
});

describe('mergeOpenApiEnis', () => {
  it('adds ENIs first seen in the cloud and never the primary ENI', () => {
    const result = mergeOpenApiEnis({
      current: {},
      remote: [aCloudEni('eni-2'), aCloudEni('eni-primary', { type: 'Primary' }), aCloudEni('eni-1')],
      vSwitchCidrs: CIDRS,
    });
    assert.deepEqual(Object.keys(result.enis).sort(), ['eni-1', 'eni-2']);
    assert.deepEqual(result.added, ['eni-1', 'eni-2']);
    assert.deepEqual(result.unlisted, []);
  });

  it('merges IPs: new remote IPs are added even to a missing map, bindings and Deleting marks survive', () => {
    const current = enisOf(
      anEni('eni-1', {
        ipv4: [anIp('10.0.0.2', { pod: 'ns/a' }), anIp('10.0.0.1', { status: 'Deleting', primary: true })],
      }),
    );
    delete current['eni-1']?.ipv6;
    const result = mergeOpenApiEnis({
      current,
      remote: [aCloudEni('eni-1', { ipv4: [...aCloudEni('x').ipv4, { ip: '10.0.0.3', primary: false }] })],
      vSwitchCidrs: CIDRS,
    });
    const eni = result.enis['eni-1'];
    assert.equal(eni?.ipv4?.['10.0.0.2']?.podID, 'ns/a');
    assert.equal(eni?.ipv4?.['10.0.0.1']?.status, 'Deleting');
    assert.deepEqual(eni?.ipv4?.['10.0.0.3'], { ip: '10.0.0.3', primary: false, status: 'Valid' });
    assert.deepEqual(Object.keys(eni?.ipv6 ?? {}), ['fd00::1']);
  });

  it('drops idle IPs the cloud no longer has and marks held ones Invalid, restoring them when they return', () => {
    const current = enisOf(
      anEni('eni-1', {
        ipv4: [anIp('10.0.0.1', { primary: true }), anIp('10.0.0.8'), anIp('10.0.0.9', { pod: 'ns/a' })],
      }),
    );
    const gone = mergeOpenApiEnis({
      current,
      remote: [aCloudEni('eni-1', { ipv4: [{ ip: '10.0.0.1', primary: true }] })],
      vSwitchCidrs: CIDRS,
    });
    assert.deepEqual(Object.keys(gone.enis['eni-1']?.ipv4 ?? {}).sort(), ['10.0.0.1', '10.0.0.9']);
    assert.equal(gone.enis['eni-1']?.ipv4?.['10.0.0.9']?.status, 'Invalid');
    const back = mergeOpenApiEnis({
      current: gone.enis,
      remote: [
        aCloudEni('eni-1', {
          ipv4: [
            { ip: '10.0.0.1', primary: true },
            { ip: '10.0.0.9', primary: false },
          ],
        }),
      ],
      vSwitchCidrs: CIDRS,
    });
    assert.equal(back.enis['eni-1']?.ipv4?.['10.0.0.9']?.status, 'Valid');
  });

  it('takes the cloud status unless the controller marked the ENI Deleting, and fills missing CIDRs', () => {
    const result = mergeOpenApiEnis({
      current: enisOf(anEni('eni-1', { status: 'Attaching' }), anEni('eni-2', { status: 'Deleting' })),
      remote: [aCloudEni('eni-1'), aCloudEni('eni-2')],
      vSwitchCidrs: CIDRS,
    });
    assert.equal(result.enis['eni-1']?.status, 'InUse');
    assert.equal(result.enis['eni-2']?.status, 'Deleting');
    assert.equal(result.enis['eni-1']?.ipv4CIDR, '10.0.0.0/24');
  });

  it('leaves ENIs missing from the listing untouched and lists them for a lookup', () => {
    const current = enisOf(
      anEni('eni-gone'),
      anEni('eni-trunk-gone', { type: 'Trunk' }),
      anEni('eni-already', { status: 'Deleting' }),
    );
    const result = mergeOpenApiEnis({ current, remote: [], vSwitchCidrs: {} });
    assert.deepEqual(result.unlisted, ['eni-gone', 'eni-trunk-gone']);
    assert.deepEqual(result.enis, current);
  });

  it('marks blocked-by-tag and unmanaged HighPerformance ENIs unschedulable, and clears the mark when it no longer holds', () => {
    const eniSpec = { enableIPv4: true, enableERDMA: false, tagBlockList: [{ key: 'team', value: 'db' }] };
    const result = mergeOpenApiEnis({
      current: enisOf(anEni('eni-was-blocked', { unschedulable: true })),
      remote: [
        aCloudEni('eni-erdma-ctl', { tags: { creator: 'alibabacloud-erdma-controller' } }),
        aCloudEni('eni-excluded', { tags: { 'terway.alibabacloud.com/excluded': 'true' } }),
        aCloudEni('eni-team', { tags: { team: 'db' } }),
        aCloudEni('eni-hp', { trafficMode: 'HighPerformance' }),
        aCloudEni('eni-plain', { tags: { team: 'web' } }),
        aCloudEni('eni-was-blocked'),
      ],
      vSwitchCidrs: CIDRS,
      eniSpec,
    });
    const unschedulable = Object.values(result.enis)
      .filter((eni) => eni.unschedulable === true)
      .map((eni) => eni.id)
      .sort();
    assert.deepEqual(unschedulable, ['eni-erdma-ctl', 'eni-excluded', 'eni-hp', 'eni-team']);
    assert.equal(result.enis['eni-was-blocked']?.unschedulable, undefined);
    const managed = mergeOpenApiEnis({
      current: {},
      remote: [aCloudEni('eni-hp', { trafficMode: 'HighPerformance' })],
      vSwitchCidrs: CIDRS,
      eniSpec: { ...eniSpec, enableERDMA: true },
    });
    assert.equal(managed.enis['eni-hp']?.unschedulable, undefined, 'ERDMA managed: HP ENIs are ours');
  });
});

describe('fold outcomes', () => {
  it('records assigned IPs as Valid and keeps existing bindings', () => {
    const enis = enisOf(anEni('eni-1', { ipv4: [anIp('10.0.0.1', { pod: 'ns/a', status: 'Deleting' })] }));
    const after = recordAssignedIps({ enis, eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.1', '10.0.0.2'] });
    assert.deepEqual(after['eni-1']?.ipv4?.['10.0.0.1'], {
      ip: '10.0.0.1',
      primary: false,
      status: 'Valid',
      podID: 'ns/a',
      podUID: 'uid-ns/a',
    });
    assert.deepEqual(after['eni-1']?.ipv4?.['10.0.0.2'], { ip: '10.0.0.2', primary: false, status: 'Valid' });
    assert.deepEqual(recordAssignedIps({ enis, eniId: 'eni-missing', family: 'ipv4', ips: ['1.1.1.1'] }), enis);
    const v6 = recordAssignedIps({
      enis: enisOf({ id: 'eni-2', status: 'InUse' }),
      eniId: 'eni-2',
      family: 'ipv6',
      ips: ['fd00::9'],
    });
    assert.deepEqual(Object.keys(v6['eni-2']?.ipv6 ?? {}), ['fd00::9']);
  });

  it('records a created ENI, an ENI to delete (known or not), and forgets ENIs and IPs', () => {
    let enis = recordCreatedEni({ enis: {}, cloud: aCloudEni('eni-1'), cidrs: CIDRS['vsw-a'] });
    assert.equal(enis['eni-1']?.status, 'InUse');
    enis = recordEniForDeletion({ enis, eniId: 'eni-1' });
    assert.equal(enis['eni-1']?.status, 'Deleting');
    assert.equal(enis['eni-1']?.macAddress, '00:16:3e:aa:bb:cc');
    enis = recordEniForDeletion({ enis, eniId: 'eni-orphan' });
    assert.deepEqual(enis['eni-orphan'], { id: 'eni-orphan', status: 'Deleting' });
    enis = forgetIps({ enis, eniId: 'eni-1', family: 'ipv4', ips: ['10.0.0.2'] });
    assert.deepEqual(Object.keys(enis['eni-1']?.ipv4 ?? {}), ['10.0.0.1']);
    enis = forgetEni({ enis, eniId: 'eni-1' });
    assert.deepEqual(Object.keys(enis), ['eni-orphan']);
  });
});
