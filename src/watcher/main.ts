/**
 * The watcher's process entry: `node dist/watcher/main.js` from the build (`npm run build`), or
 * `node --import tsx src/watcher/main.ts` (environment in WATCHER_ENV, src/watcher/watcher-config.ts). The watcher
 * itself is src/watcher/run-watcher.ts, loaded after the module hook is in place (src/process-entry.ts).
 */
import { fatalMessage, isProcessEntry, prepareProcess } from '../process-entry.js';

if (isProcessEntry(import.meta.url)) {
  prepareProcess();
  import('./run-watcher.js')
    .then(({ watcherMain }) => watcherMain())
    .catch((error: unknown) => {
      process.stderr.write(`eniflow watcher: ${fatalMessage(error)}\n`);
      process.exit(1);
    });
}
