/**
 * `npm start` and `node dist/main.js [--role all|worker|watcher]`: eniflow's process entry for one or both roles
 * (src/start-roles.ts), loaded after the module hook is in place (src/process-entry.ts).
 */
import { ConfigError } from './config.js';
import { fatalMessage, isProcessEntry, prepareProcess, wantsEmbeddedDefault } from './process-entry.js';

if (isProcessEntry(import.meta.url)) {
  if (!wantsEmbeddedDefault(process.env)) prepareProcess();
  import('./start-roles.js')
    .then(({ main }) => main(process.argv.slice(2), process.env))
    .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`eniflow: ${error instanceof ConfigError ? error.message : fatalMessage(error)}\n`);
        process.exit(1);
      },
    );
}
