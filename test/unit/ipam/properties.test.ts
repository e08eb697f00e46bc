/**
 * Property tests: the invariants the pool must keep for any node, not just the table rows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import fc from 'fast-check';

import {
  assignIpsFromLocalPool,
  countIdleIps,
  enabledFamilies,
  MAX_IPS_PER_CALL,
  MAX_IPV6_AT_CREATE,
  MAX_SECONDARY_IPV4_AT_CREATE,
  assignCalls,
  planEniAllocations,
  planGc,
  planPoolRelease,
  primaryFamilyOf,
  releaseIpsOfGonePods,
} from '../../../src/ipam/index.js';
import type { NetworkInterfaces } from '../../../src/ipam/index.js';
import { aVSwitch, carryOutAllocations, vSwitchesOf } from './builders.js';

import { scenarioArb } from './scenario-arbitrary.js';
import type { Scenario } from './scenario-arbitrary.js';

const VSWITCHES = vSwitchesOf(aVSwitch('vsw-a', { availableIpCount: 100_000 }));

/** Release gone pods, then give the others IPs: the first half of every reconcile. */
function assignLocally(s: Scenario) {
  const released = releaseIpsOfGonePods({ enis: s.enis, requests: s.requests });
  return assignIpsFromLocalPool({
    enis: released.enis,
    requests: s.requests,
    primaryFamily: primaryFamilyOf(s.spec.eni ?? {}),
  });
}

function bindingsByPod(enis: NetworkInterfaces): Map<string, { family: string; eniId: string; ip: string }[]> {
  const byPod = new Map<string, { family: string; eniId: string; ip: string }[]>();
  for (const eni of Object.values(enis)) {
    for (const family of ['ipv4', 'ipv6'] as const) {
      for (const entry of Object.values(eni[family] ?? {})) {
        if (entry.podID === undefined || entry.podID === '') continue;
        const list = byPod.get(entry.podID) ?? [];
        list.push({ family, eniId: eni.id, ip: entry.ip });
        byPod.set(entry.podID, list);
      }
    }
  }
  return byPod;
}

const RUNS = { numRuns: 300, seed: 20261202 };

describe('IPAM invariants (property)', () => {
  it('no address is bound twice and no pod holds two addresses of one family', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const result = assignLocally(s);
        const seen = new Set<string>();
        for (const [pod, list] of bindingsByPod(result.enis)) {
          for (const binding of list) {
            assert.ok(!seen.has(binding.ip), `${binding.ip} bound twice`);
            seen.add(binding.ip);
          }
          assert.ok(list.filter((b) => b.family === 'ipv4').length <= 1, `${pod} holds two IPv4`);
          assert.ok(list.filter((b) => b.family === 'ipv6').length <= 1, `${pod} holds two IPv6`);
        }
      }),
      RUNS,
    );
  });

  it("new assignments land on InUse ENIs only, on Valid addresses, and a pod's v4 and v6 share one ENI", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const result = assignLocally(s);
        for (const { podId, ref, family } of result.newlyBound) {
          const eni = s.enis[ref.eniId];
          assert.equal(eni?.status, 'InUse', `${podId} bound on ${String(eni?.status)} ENI`);
          assert.equal(eni?.[family]?.[ref.ip]?.status, 'Valid');
        }
        const byPod = bindingsByPod(result.enis);
        for (const { podId } of result.bound) {
          const enisOfPod = new Set((byPod.get(podId) ?? []).map((b) => b.eniId));
          assert.ok(enisOfPod.size <= 1, `${podId} spans ENIs ${[...enisOfPod].join(',')}`);
        }
      }),
      RUNS,
    );
  });

  it('ERDMA pods are bound only on HighPerformance ENIs and other new pods never are', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const result = assignLocally(s);
        const erdma = new Set(s.requests.filter((r) => r.requireErdma).map((r) => r.podId));
        for (const { podId, ref } of result.newlyBound) {
          const hp = s.enis[ref.eniId]?.networkInterfaceTrafficMode === 'HighPerformance';
          assert.equal(hp, erdma.has(podId), `${podId} on ${ref.eniId}`);
        }
      }),
      RUNS,
    );
  });

  it('no request exceeds an ENI quota, ten addresses per assign call, or what a create takes', () => {
    fc.assert(
      fc.property(scenarioArb, fc.double({ min: 0, max: 0.999, noNaN: true }), (s, randomValue) => {
        const local = assignLocally(s);
        const plan = planEniAllocations({
          spec: s.spec,
          enis: local.enis,
          unsatisfied: local.unsatisfied,
          vSwitches: VSWITCHES,
          randomValue,
        });
        const perAdapter = { ipv4: s.spec.nodeCap?.ipv4PerAdapter ?? 0, ipv6: s.spec.nodeCap?.ipv6PerAdapter ?? 0 };
        let created = 0;
        for (const allocation of plan.allocations) {
          assert.ok(allocation.ipv4Count + allocation.ipv6Count > 0);
          if (allocation.kind === 'assignIps') {
            assert.ok(assignCalls(allocation).every((call) => call.count > 0 && call.count <= MAX_IPS_PER_CALL));
            const eni = local.enis[allocation.eniId];
            assert.equal(eni?.status, 'InUse');
            assert.ok(Object.keys(eni?.ipv4 ?? {}).length + allocation.ipv4Count <= perAdapter.ipv4, 'IPv4 over quota');
            assert.ok(Object.keys(eni?.ipv6 ?? {}).length + allocation.ipv6Count <= perAdapter.ipv6, 'IPv6 over quota');
          } else {
            created += 1;
            assert.ok(
              allocation.ipv4Count <= MAX_SECONDARY_IPV4_AT_CREATE + 1 && allocation.ipv6Count <= MAX_IPV6_AT_CREATE,
            );
            const total = allocation.fillTo ?? allocation;
            assert.ok(total.ipv4Count <= perAdapter.ipv4 && total.ipv6Count <= perAdapter.ipv6, 'new ENI over quota');
          }
        }
        const adapters = s.spec.nodeCap?.adapters ?? 0;
        assert.ok(Object.keys(local.enis).length + created <= adapters - 1 || created === 0, 'over the adapter count');
      }),
      RUNS,
    );
  });

  it('after the plan is carried out, every servable pod is served and minPoolSize idle remain', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const local = assignLocally(s);
        const plan = planEniAllocations({
          spec: s.spec,
          enis: local.enis,
          unsatisfied: local.unsatisfied,
          vSwitches: VSWITCHES,
          randomValue: 0,
        });
        const grown = carryOutAllocations({ enis: local.enis, allocations: plan.allocations, vSwitches: VSWITCHES });
        const again = assignIpsFromLocalPool({
          enis: grown,
          requests: s.requests,
          primaryFamily: primaryFamilyOf(s.spec.eni ?? {}),
        });
        const demand = again.unsatisfied.filter((u) => u.reason === 'noIdleIp');
        if (plan.unmetDemand.normal === 0) {
          assert.deepEqual(
            demand.filter((u) => !u.request.requireErdma).map((u) => u.request.podId),
            [],
            'a normal pod is still waiting though the plan met all demand',
          );
        }
        if (plan.unmetDemand.erdma === 0) {
          assert.deepEqual(
            demand.filter((u) => u.request.requireErdma).map((u) => u.request.podId),
            [],
          );
        }
        if (plan.unmetDemand.normal === 0) {
          const families = enabledFamilies(s.spec.eni ?? {});
          const idlePairs = Object.values(again.enis)
            .filter((eni) => eni.status === 'InUse' && eni.networkInterfaceTrafficMode !== 'HighPerformance')
            .reduce(
              (sum, eni) =>
                sum +
                Math.min(
                  ...families.map(
                    (f) => Object.values(eni[f] ?? {}).filter((e) => e.status === 'Valid' && !e.podID).length,
                  ),
                ),
              0,
            );
          assert.ok(idlePairs >= (s.spec.pool?.minPoolSize ?? 0), `only ${idlePairs} idle after the plan`);
        }
      }),
      RUNS,
    );
  });

  it('after the release plan at most maxPoolSize idle IPs remain, beyond primaries that cannot go', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const local = assignLocally(s);
        const plan = planPoolRelease({ spec: s.spec, enis: local.enis });
        const family = primaryFamilyOf(s.spec.eni ?? {});
        const stuckPrimaries = Object.values(plan.enis)
          .filter((eni) => eni.status === 'InUse')
          .flatMap((eni) => Object.values(eni[family] ?? {}))
          .filter((e) => e.primary && e.status === 'Valid' && !e.podID).length;
        const max = s.spec.pool?.maxPoolSize ?? 0;
        assert.equal(plan.idleAfter, countIdleIps({ enis: plan.enis, family }));
        assert.ok(
          plan.idleAfter <= Math.max(max, 0) + stuckPrimaries,
          `${plan.idleAfter} idle > ${max} + ${stuckPrimaries}`,
        );
        assert.ok(plan.idleAfter >= Math.min(plan.idleBefore, max), 'released more than needed');
        for (const eni of Object.values(plan.enis)) {
          for (const entry of [...Object.values(eni.ipv4 ?? {}), ...Object.values(eni.ipv6 ?? {})]) {
            const before = local.enis[eni.id]?.[entry.ip.includes(':') ? 'ipv6' : 'ipv4']?.[entry.ip];
            if (entry.status === 'Deleting' && before?.status !== 'Deleting')
              assert.ok(!entry.podID, 'released an IP in use');
          }
        }
        for (const action of planGc({ enis: plan.enis })) {
          if (action.kind === 'unassignIps') assert.ok(action.ips.length <= MAX_IPS_PER_CALL && action.ips.length > 0);
        }
      }),
      RUNS,
    );
  });

  it('the result does not depend on the order of ENIs and pods', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const reversedEnis = Object.fromEntries(Object.entries(s.enis).reverse());
        const forward = assignLocally(s);
        const backward = assignLocally({ ...s, enis: reversedEnis, requests: [...s.requests].reverse() });
        assert.deepEqual(bindingsByPod(forward.enis), bindingsByPod(backward.enis));
        const p1 = planEniAllocations({
          spec: s.spec,
          enis: forward.enis,
          unsatisfied: forward.unsatisfied,
          vSwitches: VSWITCHES,
          randomValue: 0,
        });
        const p2 = planEniAllocations({
          spec: s.spec,
          enis: backward.enis,
          unsatisfied: backward.unsatisfied,
          vSwitches: VSWITCHES,
          randomValue: 0,
        });
        assert.deepEqual(p1, p2);
      }),
      RUNS,
    );
  });
});
