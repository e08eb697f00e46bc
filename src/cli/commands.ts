/**
 * The `eniflow` operator commands, over the Temporal client only: read node workflows (search attributes, the
 * `state` query), poke them (signals, the `gc` update) and drive the orphan-ENI janitor. This file parses and
 * dispatches; each command group lives in its own file.
 */
import { WorkflowNotFoundError } from '@temporalio/client';

import { CliError } from './cli-context.js';
import type { CliContext, Parsed } from './cli-context.js';
import { degradation } from './degradation-command.js';
import { janitor } from './janitor-command.js';
import { node, poke } from './node-commands.js';
import { status } from './status-command.js';

export { CliError, webUiLink } from './cli-context.js';
export { nodeWorkflowsQuery } from '../shared/workflow-ids.js';
export type { CliContext } from './cli-context.js';
export { formatJanitorReport } from './janitor-command.js';
export { kubeControlStore } from './control-store.js';
export type { ControlStore } from './control-store.js';
export { formatGcResult, formatNodeState } from './node-commands.js';
export type { NodeSummary, StatusReport } from './status-command.js';

export const CLI_USAGE = `usage: eniflow <command> [options]

  status                         nodes by IPAM state, pods waiting for an IP, the oldest wait, stuck nodes
  node <name>                    one node's state (the workflow's state query), with a Web UI link
  gc <name>                      release idle IPs above maxPoolSize now and print what was released
  resync <name>                  force a full OpenAPI sync of the node's ENIs on its next pass
  reconcile <name>               wake a reconcile pass now
  gc|resync|reconcile --all-failing
                                 signal every node whose IpamState is Error
  janitor                        the orphan-ENI janitor's last report
  janitor --dry-run              run a janitor pass that deletes nothing, print what it would delete
  janitor --delete               run a janitor pass now (deletes orphan ENIs; refused if the janitor runs dry)
  degradation set l0|l1|off      cluster-wide switch for cloud incidents: l0 no cloud call, l1 no releasing call
  degradation show               the switch (control ConfigMap) and which level each node workflow runs at

options: --json (machine-readable output of status, node, gc, janitor, degradation show)
environment: TEMPORAL_* as for the worker and watcher (address, namespace, TLS, API key, task queue);
             TEMPORAL_UI_URL (e.g. http://127.0.0.1:8233) adds Web UI links;
             degradation: KUBECONFIG, ENIFLOW_CONTROL_CONFIGMAP (namespace/name, default kube-system/eniflow-control)`;

/** The commands {@link runCli} knows. */
export const CLI_COMMANDS = ['help', 'status', 'node', 'gc', 'resync', 'reconcile', 'janitor', 'degradation'] as const;

const FLAGS = ['--json', '--all-failing', '--dry-run', '--delete'] as const;

function parseArgs(argv: readonly string[]): Parsed {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    return { command: 'help', args: [], flags: new Set() };
  }
  const flags = new Set<string>();
  const args: string[] = [];
  for (const arg of rest) {
    if (arg.startsWith('--')) {
      if (!(FLAGS as readonly string[]).includes(arg)) throw new CliError(`unknown option ${arg}\n${CLI_USAGE}`, 2);
      flags.add(arg);
    } else {
      args.push(arg);
    }
  }
  return { command, args, flags };
}

/** Runs one command; returns the process exit code (0 ok, 1 failed, 2 usage). */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  try {
    const parsed = parseArgs(argv);
    switch (parsed.command) {
      case 'help':
        context.out(CLI_USAGE);
        return 0;
      case 'status':
        await status(context, parsed);
        return 0;
      case 'node':
        await node(context, parsed);
        return 0;
      case 'gc':
      case 'resync':
      case 'reconcile':
        return await poke(context, { ...parsed, command: parsed.command });
      case 'janitor':
        await janitor(context, parsed);
        return 0;
      case 'degradation':
        await degradation(context, parsed);
        return 0;
      default:
        throw new CliError(`unknown command "${parsed.command}"\n${CLI_USAGE}`, 2);
    }
  } catch (error) {
    if (error instanceof CliError) {
      context.out(`eniflow: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof WorkflowNotFoundError) {
      context.out(`eniflow: no running workflow ${error.workflowId} (is the node known to the watcher?)`);
      return 1;
    }
    throw error;
  }
}
