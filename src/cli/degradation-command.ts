/**
 * `eniflow degradation set l0|l1|off` and `eniflow degradation show`: the cluster's degradation switch lives in the
 * control ConfigMap (the watcher watches it and tells every node workflow); `show` also asks each node workflow which
 * level it runs at, so an operator sees when the switch has reached them all.
 */
import { degradationSummary, parseDegradationLevel } from '../ipam/index.js';
import { mapLimited } from '../shared/map-limited.js';
import { stateQuery } from '../workflows/messages.js';
import { CliError, listNodeWorkflows, nodeNameOf } from './cli-context.js';
import type { CliContext, Parsed } from './cli-context.js';

/** Node workflows asked at once by `show`. */
const QUERY_CONCURRENCY = 16;

export async function degradation(context: CliContext, parsed: Parsed): Promise<void> {
  const store = context.control;
  if (store === undefined) throw new CliError('degradation: no Kubernetes access (KUBECONFIG or in-cluster)', 1);
  const [action, value, ...extra] = parsed.args;
  if (action === 'set') {
    if (value === undefined || extra.length > 0)
      throw new CliError('degradation set takes one level: l0, l1 or off', 2);
    const parsedLevel = parseDegradationLevel(value);
    if (!parsedLevel.ok) throw new CliError(parsedLevel.message, 2);
    const revision = await store.write(parsedLevel.level === 'off' ? '' : parsedLevel.level);
    context.out(
      `degradation ${parsedLevel.level} set in ${store.where} (resourceVersion ${revision}): ` +
        `${degradationSummary(parsedLevel.level)}. The watcher tells every node workflow; ` +
        '`eniflow degradation show` lists which have it.',
    );
    return;
  }
  if (action !== 'show' || value !== undefined) throw new CliError('degradation: set l0|l1|off, or show', 2);
  const stored = await store.read();
  const level = parseDegradationLevel(stored?.value);
  const nodes = await listNodeWorkflows(context);
  const seen = await mapLimited(nodes, QUERY_CONCURRENCY, async (info) => {
    try {
      const state = await context.client.workflow.getHandle(info.workflowId).query(stateQuery);
      return {
        node: nodeNameOf(info),
        level: state.degradation?.level ?? 'off',
        revision: state.degradation?.revision,
        passRunningAt: state.degradation?.passRunningAt,
      };
    } catch {
      return { node: nodeNameOf(info), level: 'unknown', revision: undefined, passRunningAt: undefined };
    }
  });
  const byLevel: Record<string, string[]> = {};
  for (const entry of seen) (byLevel[entry.level] ??= []).push(entry.node);
  if (parsed.flags.has('--json')) {
    context.out(
      JSON.stringify(
        {
          configMap: store.where,
          value: stored?.value ?? null,
          resourceVersion: stored?.resourceVersion ?? null,
          level: level.ok ? level.level : null,
          nodes: seen,
        },
        null,
        2,
      ),
    );
    return;
  }
  const setting =
    stored === undefined
      ? `${store.where} does not exist: the watcher's ENIFLOW_DEGRADATION applies`
      : !level.ok
        ? `${store.where}: ${level.message} (the watcher keeps the last valid level)`
        : stored.value === undefined
          ? `${store.where} has no degradation key: the watcher's ENIFLOW_DEGRADATION applies`
          : `${store.where}: ${level.level} (resourceVersion ${stored.resourceVersion}): ${degradationSummary(level.level)}`;
  context.out(`degradation ${setting}`);
  context.out(`node workflows: ${seen.length}`);
  for (const key of Object.keys(byLevel).sort()) {
    const names = byLevel[key] ?? [];
    context.out(`  ${key}: ${names.length}${names.length > 0 ? ` (${shortList(names)})` : ''}`);
  }
  // A level is in effect for a node from its next pass: one running meanwhile finishes the calls it began.
  const finishing = seen.filter((entry) => entry.passRunningAt !== undefined);
  if (finishing.length > 0) {
    context.out(
      `  still finishing a pass begun at an earlier level: ${finishing.length} ` +
        `(${shortList(finishing.map((entry) => `${entry.node} at ${entry.passRunningAt ?? ''}`))})`,
    );
  }
}

function shortList(names: readonly string[]): string {
  return `${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''}`;
}
