/**
 * The worker's process entry: `node dist/worker/main.js` from the build (the image's default command), or
 * `node --import tsx src/worker/main.ts` (environment in src/config.ts). The worker itself is
 * src/worker/run-worker.ts, loaded after the module hook is in place (src/process-entry.ts).
 */
import { ConfigError } from '../config.js';
import { fatalMessage, isProcessEntry, prepareProcess } from '../process-entry.js';

if (isProcessEntry(import.meta.url)) {
  prepareProcess();
  import('./run-worker.js')
    .then(({ runWorker }) => runWorker())
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof ConfigError ? error.message : fatalMessage(error)}\n`);
      process.exit(1);
    });
}
