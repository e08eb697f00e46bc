/**
 * What eniflow's process entries (src/main.ts, src/watcher/main.ts, src/worker/main.ts) share. Each is a thin
 * module: it installs the module hook of src/kube/slim-client-node.ts, and only then loads the role's code with
 * `import()` — a static import would load `@kubernetes/client-node` (with all its generated APIs) before any code of
 * the entry runs, since an ES module graph is loaded whole before it is evaluated.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { registerSlimClientNode } from './kube/slim-client-node.js';

/** True when the module at `moduleUrl` is the script node was started with (not imported by a test or another entry). */
export function isProcessEntry(moduleUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return false;
  }
}

/** Installs the entries' module hooks; call it before the first `import()` of code that uses client-node. */
export function prepareProcess(): void {
  registerSlimClientNode();
}

/**
 * `npm start`'s embedded default (src/start-roles.ts) is used when none of the connection settings is given. Its dev
 * tooling (scripts/lib: the test kube-apiserver's CRD checks) uses API groups the roles do not, so src/main.ts
 * leaves client-node whole there: memory only matters where eniflow is deployed.
 */
export function wantsEmbeddedDefault(env: NodeJS.ProcessEnv): boolean {
  return ['TEMPORAL_ADDRESS', 'ECS_REGION_ID', 'KUBECONFIG', 'KUBERNETES_SERVICE_HOST'].every(
    (name) => env[name] === undefined || env[name] === '',
  );
}

/** The message of an error that ends a process, with its stack when it has one. */
export function fatalMessage(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
