import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { podIpRequestsFromPods } from '../../../src/ipam/index.js';
import type { EniSpec, PodSnapshot } from '../../../src/ipam/index.js';
import { aPod } from './builders.js';

const V4: EniSpec = { enableIPv4: true, enableIPv6: false };
const DUAL: EniSpec = { enableIPv4: true, enableIPv6: true };
const V4_ERDMA: EniSpec = { enableIPv4: true, enableERDMA: true };

describe('podIpRequestsFromPods', () => {
  const cases: {
    name: string;
    pods: PodSnapshot[];
    eniSpec: EniSpec;
    expected: { podId: string; v4: boolean; v6: boolean; erdma: boolean; statusIpv4?: string; statusIpv6?: string }[];
    problems?: string[];
  }[] = [
    {
      name: 'an ordinary pod asks for an IPv4 address',
      pods: [aPod('a')],
      eniSpec: V4,
      expected: [{ podId: 'default/a', v4: true, v6: false, erdma: false }],
    },
    {
      name: 'hostNetwork pods need no pool IP',
      pods: [aPod('host', { hostNetwork: true }), aPod('a')],
      eniSpec: V4,
      expected: [{ podId: 'default/a', v4: true, v6: false, erdma: false }],
    },
    {
      name: 'pod-ENI pods are served elsewhere',
      pods: [
        aPod('eni', { annotations: { 'k8s.aliyun.com/pod-eni': 'true' } }),
        aPod('b', { annotations: { 'k8s.aliyun.com/pod-eni': 'false' } }),
      ],
      eniSpec: V4,
      expected: [{ podId: 'default/b', v4: true, v6: false, erdma: false }],
    },
    {
      name: 'exited sandboxes (Succeeded, Failed) are skipped, terminating and pending are kept',
      pods: [
        aPod('done', { phase: 'Succeeded' }),
        aPod('failed', { phase: 'Failed' }),
        aPod('run', { phase: 'Running' }),
        aPod('wait', { phase: 'Pending' }),
      ],
      eniSpec: V4,
      expected: [
        { podId: 'default/run', v4: true, v6: false, erdma: false },
        { podId: 'default/wait', v4: true, v6: false, erdma: false },
      ],
    },
    {
      name: 'dual-stack pods ask for both families and report both status IPs',
      pods: [aPod('a', { podIP: '10.0.0.5', podIPs: ['10.0.0.5', 'fd00::5'] })],
      eniSpec: DUAL,
      expected: [
        { podId: 'default/a', v4: true, v6: true, erdma: false, statusIpv4: '10.0.0.5', statusIpv6: 'fd00::5' },
      ],
    },
    {
      name: 'the last status IP of each family wins, empty strings are ignored',
      pods: [aPod('a', { podIP: '', podIPs: ['10.0.0.5', '10.0.0.6'] })],
      eniSpec: V4,
      expected: [{ podId: 'default/a', v4: true, v6: false, erdma: false, statusIpv4: '10.0.0.6' }],
    },
    {
      name: 'a non-zero aliyun/erdma limit asks for ERDMA when the node enables it',
      pods: [
        aPod('rdma', { erdma: '1' }),
        aPod('zero', { erdma: '0' }),
        aPod('init', { initErdma: '2' }),
        aPod('milli', { erdma: '0m' }),
      ],
      eniSpec: V4_ERDMA,
      expected: [
        { podId: 'default/init', v4: true, v6: false, erdma: true },
        { podId: 'default/milli', v4: true, v6: false, erdma: false },
        { podId: 'default/rdma', v4: true, v6: false, erdma: true },
        { podId: 'default/zero', v4: true, v6: false, erdma: false },
      ],
    },
    {
      name: 'ERDMA limits are ignored when the node does not enable ERDMA',
      pods: [aPod('rdma', { erdma: '1' })],
      eniSpec: V4,
      expected: [{ podId: 'default/rdma', v4: true, v6: false, erdma: false }],
    },
    {
      name: 'a malformed status IP is reported and the pod asks for nothing new',
      pods: [aPod('bad', { podIP: '10.0.0.300' }), aPod('good')],
      eniSpec: V4,
      expected: [
        { podId: 'default/bad', v4: false, v6: false, erdma: false },
        { podId: 'default/good', v4: true, v6: false, erdma: false },
      ],
      problems: ['default/bad'],
    },
    {
      name: 'requests come out sorted by pod whatever the input order',
      pods: [aPod('c', { namespace: 'z' }), aPod('b', { namespace: 'a' }), aPod('a', { namespace: 'z' })],
      eniSpec: V4,
      expected: [
        { podId: 'a/b', v4: true, v6: false, erdma: false },
        { podId: 'z/a', v4: true, v6: false, erdma: false },
        { podId: 'z/c', v4: true, v6: false, erdma: false },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const demand = podIpRequestsFromPods({ pods: c.pods, eniSpec: c.eniSpec });
      assert.deepEqual(
        demand.requests.map((r) => {
          const row: (typeof c.expected)[number] = {
            podId: r.podId,
            v4: r.requireIpv4,
            v6: r.requireIpv6,
            erdma: r.requireErdma,
          };
          if (r.statusIpv4 !== undefined) row.statusIpv4 = r.statusIpv4;
          if (r.statusIpv6 !== undefined) row.statusIpv6 = r.statusIpv6;
          return row;
        }),
        c.expected,
      );
      assert.deepEqual(
        demand.problems.map((p) => p.podId),
        c.problems ?? [],
      );
    });
  }

  it('carries the pod UID into the request', () => {
    const [request] = podIpRequestsFromPods({ pods: [aPod('a')], eniSpec: V4 }).requests;
    assert.equal(request?.podUid, 'uid-a');
  });
});
