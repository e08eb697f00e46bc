/**
 * The random node the property tests draw: a spec, ENIs with bound, idle and Deleting IPs of every kind, and pods
 * (some already bound, some new). Shared by the property test files.
 */
import fc from 'fast-check';

import type {
  FlavorEntry,
  IpEntry,
  NetworkInterface,
  NetworkInterfaces,
  NodeSpec,
  PodIpRequest,
} from '../../../src/ipam/index.js';

export interface Scenario {
  spec: NodeSpec;
  enis: NetworkInterfaces;
  requests: PodIpRequest[];
}

const familiesArb = fc.constantFrom(
  { enableIPv4: true, enableIPv6: false },
  { enableIPv4: true, enableIPv6: true },
  { enableIPv4: false, enableIPv6: true },
);

export const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({
    families: familiesArb,
    adapters: fc.integer({ min: 2, max: 6 }),
    ipv4PerAdapter: fc.integer({ min: 2, max: 20 }),
    ipv6PerAdapter: fc.integer({ min: 2, max: 20 }),
    minPoolSize: fc.integer({ min: 0, max: 6 }),
    poolSpread: fc.integer({ min: 0, max: 10 }),
    enableTrunk: fc.boolean(),
    enableErdma: fc.boolean(),
    enis: fc.array(
      fc.record({
        kind: fc.constantFrom('secondary', 'secondary', 'trunk', 'erdma'),
        status: fc.constantFrom('InUse', 'InUse', 'InUse', 'Attaching', 'Deleting'),
        ipv4: fc.array(fc.record({ bound: fc.boolean(), deleting: fc.boolean() }), { maxLength: 12 }),
        ipv6: fc.array(fc.record({ bound: fc.boolean(), deleting: fc.boolean() }), { maxLength: 12 }),
      }),
      { maxLength: 5 },
    ),
    newPods: fc.array(fc.boolean(), { maxLength: 20 }),
    keepBoundPod: fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
  })
  .map((g) => {
    const secondary = g.adapters - 1 - (g.enableTrunk ? 1 : 0) - (g.enableErdma ? 1 : 0);
    const flavor: FlavorEntry[] = [];
    if (g.enableTrunk)
      flavor.push({ networkInterfaceType: 'Trunk', networkInterfaceTrafficMode: 'Standard', count: 1 });
    if (g.enableErdma)
      flavor.push({ networkInterfaceType: 'Secondary', networkInterfaceTrafficMode: 'HighPerformance', count: 1 });
    flavor.push({
      networkInterfaceType: 'Secondary',
      networkInterfaceTrafficMode: 'Standard',
      count: Math.max(0, secondary),
    });
    const spec: NodeSpec = {
      nodeMetadata: { instanceID: 'i-1', zoneID: 'zone-a' },
      nodeCap: { adapters: g.adapters, ipv4PerAdapter: g.ipv4PerAdapter, ipv6PerAdapter: g.ipv6PerAdapter },
      eni: { ...g.families, enableTrunk: g.enableTrunk, enableERDMA: g.enableErdma, vSwitchOptions: ['vsw-a'] },
      pool: { minPoolSize: g.minPoolSize, maxPoolSize: g.minPoolSize + g.poolSpread },
      flavor,
    };
    let counter = 0;
    let podCounter = 0;
    const boundPods: { podId: string; erdma: boolean }[] = [];
    const enis: NetworkInterfaces = {};
    g.enis.slice(0, g.adapters - 1).forEach((e, index) => {
      const id = `eni-${index}`;
      const isHp = e.kind === 'erdma';
      const entries = (list: { bound: boolean; deleting: boolean }[], family: 'ipv4' | 'ipv6', limit: number) => {
        const map: Record<string, IpEntry> = {};
        list.slice(0, limit).forEach((item, i) => {
          counter += 1;
          const ip =
            family === 'ipv4'
              ? `10.${index}.${Math.floor(counter / 200)}.${counter % 200}`
              : `fd00::${counter.toString(16)}`;
          const entry: IpEntry = {
            ip,
            primary: family === 'ipv4' && i === 0,
            status: item.deleting ? 'Deleting' : 'Valid',
          };
          if (item.bound) {
            podCounter += 1;
            entry.podID = `ns/bound-${podCounter}`;
            boundPods.push({ podId: entry.podID, erdma: isHp });
          }
          map[ip] = entry;
        });
        return map;
      };
      const eni: NetworkInterface = {
        id,
        status: e.status,
        vSwitchID: 'vsw-a',
        networkInterfaceType: e.kind === 'trunk' ? 'Trunk' : 'Secondary',
        networkInterfaceTrafficMode: isHp ? 'HighPerformance' : 'Standard',
        ipv4: entries(e.ipv4.length === 0 ? [{ bound: false, deleting: false }] : e.ipv4, 'ipv4', g.ipv4PerAdapter),
        ipv6: entries(e.ipv6, 'ipv6', g.ipv6PerAdapter),
      };
      enis[id] = eni;
    });
    const requireIpv4 = g.families.enableIPv4;
    const requireIpv6 = g.families.enableIPv6;
    const requests: PodIpRequest[] = [];
    boundPods.forEach((pod, i) => {
      if (g.keepBoundPod[i % 64] === true) {
        requests.push({
          podId: pod.podId,
          podUid: '',
          requireIpv4,
          requireIpv6,
          requireErdma: g.enableErdma && pod.erdma,
        });
      }
    });
    g.newPods.forEach((erdma, i) => {
      requests.push({
        podId: `ns/new-${i}`,
        podUid: '',
        requireIpv4,
        requireIpv6,
        requireErdma: g.enableErdma && erdma,
      });
    });
    return { spec, enis, requests };
  });
