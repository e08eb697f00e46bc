import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startEcsEmulator } from './index.js';

/**
 * `npm run emulator -- --port <p> [--fixture <file>] [--state <file>]`: runs the emulator until SIGTERM/SIGINT and
 * prints one JSON line with its endpoint, region and accepted AccessKey. With `--state`, the state is loaded from
 * that file when it exists and saved back to it on shutdown, so a test can restart the emulator.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      fixture: { type: 'string' },
      state: { type: 'string' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: invalid port ${values.port}`);
  const logger = pino({ name: 'ecs-emulator' }, pino.destination(2));
  const statePath = values.state;
  const emulator = await startEcsEmulator({
    port,
    logger,
    ...(values.fixture === undefined ? {} : { fixture: values.fixture }),
    ...(statePath !== undefined && existsSync(statePath) ? { state: statePath } : {}),
  });
  process.stdout.write(
    `${JSON.stringify({
      endpoint: emulator.endpoint,
      protocol: 'http',
      port: emulator.port,
      regionId: emulator.regionId,
      accessKeyId: emulator.accessKeyId,
      accessKeySecret: emulator.accessKeySecret,
      admin: `http://${emulator.endpoint}/__admin/`,
    })}\n`,
  );
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'ecs emulator stopping');
    const saveState = async (): Promise<void> => {
      if (statePath === undefined) return;
      await writeFile(statePath, `${JSON.stringify(await emulator.admin.saveState(), null, 2)}\n`);
    };
    saveState()
      .then(() => emulator.close())
      .then(() => {
        process.exitCode = 0;
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'ecs emulator shutdown failed');
        process.exitCode = 1;
      });
  };
  process.once('SIGTERM', () => {
    stop('SIGTERM');
  });
  process.once('SIGINT', () => {
    stop('SIGINT');
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`ecs emulator failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
