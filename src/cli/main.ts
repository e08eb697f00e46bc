#!/usr/bin/env node
/**
 * `npm run eniflow -- <command>` (or the `eniflow` bin): operator commands over Temporal, configured like the worker
 * and the watcher (`TEMPORAL_*`, see src/config.ts), plus `TEMPORAL_UI_URL` for Web UI links. See {@link CLI_USAGE}.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';

import { ConfigError, loadTemporalConnectionConfig } from '../config.js';
import { controlConfigMapOf } from '../watcher/watcher-config.js';
import { CLI_COMMANDS, CLI_USAGE, kubeControlStore, runCli } from './commands.js';
import type { ControlStore } from './commands.js';

/** The control ConfigMap, for the `degradation` command only: the other commands need no Kubernetes access. */
function controlStore(command: string, problems: string[]): ControlStore | undefined {
  if (command !== 'degradation') return undefined;
  const where = controlConfigMapOf(process.env, problems);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeControlStore({ core: kubeConfig.makeApiClient(CoreV1Api), ...where });
}

function write(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    write(CLI_USAGE);
    return command === undefined ? 2 : 0;
  }
  if (!(CLI_COMMANDS as readonly string[]).includes(command)) {
    write(`eniflow: unknown command "${command}"\n${CLI_USAGE}`);
    return 2;
  }
  const problems: string[] = [];
  const config = loadTemporalConnectionConfig(process.env, problems);
  const control = controlStore(command, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  const connection = await Connection.connect({
    address: config.address,
    ...(config.tls === undefined ? {} : { tls: config.tls }),
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
    ...(config.metadata === undefined ? {} : { metadata: config.metadata }),
  });
  try {
    const uiUrl = process.env['TEMPORAL_UI_URL'];
    return await runCli(argv, {
      client: new Client({ connection, namespace: config.namespace }),
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      ...(uiUrl === undefined || uiUrl === '' ? {} : { uiUrl }),
      ...(control === undefined ? {} : { control }),
      out: write,
    });
  } finally {
    await connection.close();
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`eniflow: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
