/**
 * Monitoring as shipped: the kustomize overlay overlays/monitoring and the Helm chart (monitoring.* values) render the
 * same ServiceMonitors, alerts and dashboard; every alert links its section of docs/runbook.md; and every PromQL
 * expression of the rules and the dashboard names only metrics the worker's and the watcher's registries export
 * (collected from the registries themselves, not from a list kept by hand).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';

import type { KubernetesObject } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';

import { watcherRegistry } from '../../../src/watcher/health-server.js';
import type { HealthSource } from '../../../src/watcher/health-server.js';
import { createWorkerMetrics, ENI_ATTACH_BUCKETS, POD_IP_READY_BUCKETS } from '../../../src/worker/metrics.js';
import { readRepoFile, renderDeployBase, renderHelmChart } from './deploy-tools.js';

const RUNBOOK_BASE = 'https://github.com/eniflow/eniflow/blob/main/docs/runbook.md';

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
type RuleGroups = { name: string; rules: Rule[] }[];
type Monitor = KubernetesObject & {
  spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string }[] };
};
interface DashboardPanel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}

function named(objects: readonly KubernetesObject[], kind: string, name: string): KubernetesObject {
  const found = objects.find((object) => object.kind === kind && object.metadata?.name === name);
  assert.ok(found, `${kind}/${name} is rendered`);
  return found;
}

function groupsOf(objects: readonly KubernetesObject[], name: string): RuleGroups {
  return (named(objects, 'PrometheusRule', name) as KubernetesObject & { spec: { groups: RuleGroups } }).spec.groups;
}

/** Every series name a registry exports, histograms with their `_bucket`, `_sum` and `_count` series. */
async function exportedNames(registries: readonly Registry[]): Promise<Set<string>> {
  const names = new Set<string>();
  for (const registry of registries) {
    for (const metric of await registry.getMetricsAsJSON()) {
      names.add(metric.name);
      if (String(metric.type) === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
    }
  }
  return names;
}

/** Metric names in a PromQL expression: eniflow's, and Node's process metrics (`process_*`, `nodejs_*`). */
function metricNamesIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...withoutStrings.matchAll(/\b(?:eniflow|process|nodejs)_[a-zA-Z0-9_]+\b/g)].map((match) => match[0]);
}

function dashboardExprs(panels: readonly DashboardPanel[]): { title: string; expr: string }[] {
  return panels.flatMap((panel) => [
    ...(panel.targets ?? []).flatMap((target) =>
      target.expr === undefined ? [] : [{ title: panel.title ?? '', expr: target.expr }],
    ),
    ...dashboardExprs(panel.panels ?? []),
  ]);
}

describe('monitoring: overlays/monitoring and the chart', () => {
  let overlay: KubernetesObject[];
  let chart: KubernetesObject[];
  let dashboardFile: string;
  let exported: Set<string>;
  let workerRegistry: Registry;

  before(async () => {
    const enabled = {
      'monitoring.serviceMonitor.enabled': true,
      'monitoring.prometheusRule.enabled': true,
      'monitoring.grafanaDashboard.enabled': true,
    };
    [overlay, chart, dashboardFile] = await Promise.all([
      renderDeployBase('overlays/monitoring').then((rendered) => rendered.objects),
      renderHelmChart({ set: enabled }),
      readRepoFile('overlays/monitoring/grafana-dashboard.json'),
    ]);
    const idle = { lists: 0, expired: 0, idleTimeouts: 0, listTimeouts: 0, errors: 0, restarts: 0, watchRequests: 0 };
    const source: HealthSource = {
      isSynced: () => true,
      metrics: () => ({
        signalsSent: 0,
        signalFailures: 0,
        sweepPending: 0,
        isLeader: false,
        leader: { acquired: 0, lost: 0 },
        informers: { pods: idle, nodeCrs: idle, coreNodes: idle },
      }),
    };
    workerRegistry = createWorkerMetrics().registry;
    exported = await exportedNames([workerRegistry, watcherRegistry(source)]);
  });

  it('scrapes each process through its Service, on ports the Service names', () => {
    for (const objects of [overlay, chart]) {
      for (const component of ['worker', 'watcher']) {
        const monitor = named(objects, 'ServiceMonitor', `eniflow-${component}`) as Monitor;
        const service = named(objects, 'Service', `eniflow-${component}`) as KubernetesObject & {
          spec: { ports: { name: string }[] };
        };
        for (const [label, value] of Object.entries(monitor.spec.selector.matchLabels)) {
          assert.equal(service.metadata?.labels?.[label], value, `${component}: the Service carries ${label}`);
        }
        assert.deepEqual(
          monitor.spec.endpoints.map((endpoint) => [endpoint.port, endpoint.path]),
          component === 'worker'
            ? [
                ['health', '/metrics'],
                ['sdk-metrics', '/metrics'],
              ]
            : [['health', '/metrics']],
        );
        const ports = new Set(service.spec.ports.map((port) => port.name));
        for (const endpoint of monitor.spec.endpoints) assert.ok(ports.has(endpoint.port), endpoint.port);
      }
    }
  });

  it('renders the same alerts from both, and the chart moves the runbook links where it is told', async () => {
    assert.deepEqual(groupsOf(chart, 'eniflow'), groupsOf(overlay, 'eniflow'));
    const moved = await renderHelmChart({
      set: {
        'monitoring.prometheusRule.enabled': true,
        'monitoring.prometheusRule.runbookBaseUrl': 'https://wiki.example.com/eniflow-runbook',
      },
    });
    const urls = groupsOf(moved, 'eniflow').flatMap((group) => group.rules.map((r) => r.annotations?.['runbook_url']));
    assert.ok(urls.length > 0);
    for (const url of urls) assert.match(url ?? '', /^https:\/\/wiki\.example\.com\/eniflow-runbook#[a-z]+$/);
  });

  it('ships the dashboard file unchanged in both, labelled for the Grafana sidecar', () => {
    for (const [objects, name] of [
      [overlay, 'eniflow-grafana-dashboard'],
      [chart, 'eniflow-grafana-dashboard'],
    ] as const) {
      const configMap = named(objects, 'ConfigMap', name) as KubernetesObject & { data: Record<string, string> };
      assert.equal(configMap.metadata?.labels?.['grafana_dashboard'], '1');
      assert.deepEqual(JSON.parse(configMap.data['eniflow.json'] ?? ''), JSON.parse(dashboardFile));
    }
  });

  it('gives every alert a severity, a summary and a runbook section that exists', async () => {
    const runbook = await readRepoFile('docs/runbook.md');
    const sections = new Set([...runbook.matchAll(/^## (\S+)$/gm)].map((match) => (match[1] ?? '').toLowerCase()));
    const rules = groupsOf(overlay, 'eniflow').flatMap((group) => group.rules);
    assert.ok(rules.length >= 8, `only ${String(rules.length)} alerts`);
    for (const rule of rules) {
      const alert = rule.alert ?? '';
      assert.match(alert, /^Eniflow[A-Za-z]+$/);
      assert.ok(['critical', 'warning', 'info'].includes(rule.labels?.['severity'] ?? ''), `${alert}: severity`);
      assert.ok((rule.annotations?.['summary'] ?? '') !== '', `${alert}: summary`);
      const url = rule.annotations?.['runbook_url'] ?? '';
      assert.ok(url.startsWith(`${RUNBOOK_BASE}#`), `${alert}: runbook_url ${url}`);
      const anchor = url.slice(RUNBOOK_BASE.length + 1);
      assert.ok(sections.has(anchor), `${alert}: docs/runbook.md has a section for #${anchor}`);
    }
  });

  it('names, in every PromQL expression, only metrics the worker and the watcher export', () => {
    assert.deepEqual(metricNamesIn('rate(eniflow_nope_total{x="eniflow_not_a_name"}[5m])'), ['eniflow_nope_total']);
    const exprs = [
      ...groupsOf(overlay, 'eniflow').flatMap((group) =>
        group.rules.map((rule) => ({ where: `alert ${rule.alert ?? ''}`, expr: rule.expr })),
      ),
      ...dashboardExprs((JSON.parse(dashboardFile) as { panels: DashboardPanel[] }).panels).map((entry) => ({
        where: `panel ${entry.title}`,
        expr: entry.expr,
      })),
    ];
    assert.ok(exprs.length >= 20, `only ${String(exprs.length)} expressions`);
    for (const { where, expr } of exprs) {
      const names = metricNamesIn(expr);
      assert.ok(names.length > 0, `${where} names no eniflow or process metric: ${expr}`);
      for (const name of names) assert.ok(exported.has(name), `${where}: ${name} is not exported (${expr})`);
    }
    // The user-impact and cloud metrics the alerts are built on are all there.
    for (const name of [
      'eniflow_pods_waiting_for_ip',
      'eniflow_node_workflows',
      'eniflow_vswitch_blocked',
      'eniflow_ecs_calls_total',
      'eniflow_node_last_successful_pass_timestamp_seconds',
      'eniflow_pod_ip_ready_seconds_bucket',
      'eniflow_eni_attach_duration_seconds_bucket',
    ]) {
      assert.ok(exported.has(name), name);
    }
  });

  it('alerts on pod→IP p99 and charts pod→IP p50/p99 and attach durations by result, by labels the worker exports', () => {
    const rules = groupsOf(overlay, 'eniflow').flatMap((group) => group.rules);
    const latency = rules.find((rule) => rule.alert === 'EniflowPodIpLatencyHigh');
    assert.ok(latency, 'the pod→IP latency alert');
    const threshold =
      /^histogram_quantile\(0\.99, sum by \(le\) \(rate\(eniflow_pod_ip_ready_seconds_bucket\[\w+\]\)\)\) > (\d+)$/.exec(
        latency.expr,
      );
    assert.ok(threshold, `p99 of the pod→IP histogram over every worker: ${latency.expr}`);
    assert.ok(
      POD_IP_READY_BUCKETS.includes(Number(threshold[1])),
      'the threshold is a bucket bound, where the quantile is exact',
    );
    assert.equal(latency.for, '10m');

    const exprs = dashboardExprs((JSON.parse(dashboardFile) as { panels: DashboardPanel[] }).panels).map(
      (entry) => entry.expr,
    );
    for (const quantile of ['0.5', '0.99']) {
      assert.ok(
        exprs.some(
          (expr) =>
            expr.startsWith(`histogram_quantile(${quantile}, `) && expr.includes('eniflow_pod_ip_ready_seconds_bucket'),
        ),
        `a pod→IP p${quantile.slice(2)} panel`,
      );
    }
    const attachExprs = exprs.filter((expr) => expr.includes('eniflow_eni_attach_duration_seconds'));
    assert.ok(
      attachExprs.some((expr) => /histogram_quantile\(0\.99, sum by \([^)]*\bresult\b/.test(expr)),
      'attach p99 by result',
    );
    // Every label a latency panel groups by is one the histogram has (or `le`).
    for (const name of ['eniflow_pod_ip_ready_seconds', 'eniflow_eni_attach_duration_seconds']) {
      const metric = workerRegistry.getSingleMetric(name) as unknown as { labelNames: string[] } | undefined;
      assert.ok(metric, name);
      const labels = new Set(['le', ...metric.labelNames]);
      for (const expr of exprs.filter((entry) => entry.includes(name))) {
        for (const match of expr.matchAll(/by \(([^)]*)\)/g)) {
          for (const label of (match[1] ?? '').split(',').map((entry) => entry.trim())) {
            assert.ok(labels.has(label), `${name} has no label ${label} (${expr})`);
          }
        }
      }
    }
    assert.deepEqual(
      [POD_IP_READY_BUCKETS[0], POD_IP_READY_BUCKETS.at(-1), ENI_ATTACH_BUCKETS[0], ENI_ATTACH_BUCKETS.at(-1)],
      [0.1, 300, 1, 180],
      'pod→IP buckets cover 0.1–300 s, attach buckets 1–180 s as Terway’s',
    );
  });
});
