/**
 * `node dist/worker/bundle-workflows.js` (the second step of `npm run build`): bundles the workflow code once, at
 * build time, into `dist/workflow-bundle.js`, which a worker started from `dist/` loads instead of running webpack at
 * every start (see `workflowSource` in create-worker.ts). An optional argument names another output file.
 */
import { writeFile } from 'node:fs/promises';

import { WORKFLOW_BUNDLE_PATH, WORKFLOWS_PATH } from './create-worker.js';
import { bundleWorkflows } from './workflow-bundle-options.js';

const quiet = (): undefined => undefined;
/** webpack's summary is long: only its warnings and errors are shown. */
const buildLogger = {
  log: quiet,
  trace: quiet,
  debug: quiet,
  info: quiet,
  warn: (message: string) => process.stderr.write(`${message}\n`),
  error: (message: string) => process.stderr.write(`${message}\n`),
};

/**
 * Bundles `workflowsPath` and writes the bundle (with its inline source map, without sources: see
 * workflow-bundle-options.ts) to `outFile`; returns its size.
 */
export async function writeWorkflowBundle(
  input: { workflowsPath?: string; outFile?: string } = {},
): Promise<{ outFile: string; bytes: number }> {
  const outFile = input.outFile ?? WORKFLOW_BUNDLE_PATH;
  const code = await bundleWorkflows(input.workflowsPath ?? WORKFLOWS_PATH, buildLogger);
  await writeFile(outFile, code);
  return { outFile, bytes: Buffer.byteLength(code) };
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const outFile = process.argv[2];
  writeWorkflowBundle(outFile === undefined ? {} : { outFile }).then(
    ({ outFile: written, bytes }) => {
      process.stdout.write(`workflow bundle: ${written} (${(bytes / 1024).toFixed(0)} KiB)\n`);
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
