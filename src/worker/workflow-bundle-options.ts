/**
 * How eniflow bundles its workflow code (the build's dist/workflow-bundle.js and the cache a worker started from
 * source uses): the SDK's webpack configuration with a source map that names files and lines but carries no sources.
 *
 * The SDK's default (`devtool: 'inline-source-map'`) embeds every bundled file's text (`sourcesContent`) in the
 * bundle, 3.4 MiB of 3.4 + 1.2, which the worker parses on the main thread and again, as a SourceMapConsumer, in the
 * workflow thread (≈ 35–42 MiB of heap together). Workflow stack traces need only the mappings: the SDK's
 * `Error.prepareStackTrace` in the workflow context looks up `source:line` per frame and never reads the sources
 * (they serve only the `__stack_trace` query's `showStackTraceSources`, which eniflow does not use). `cheap-module`
 * maps each generated line to its original TypeScript line (through swc's map) without per-column segments; the
 * map must stay inline, since the worker extracts it from the bundle's last line.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import type { BundleOptions } from '@temporalio/worker';

export const WORKFLOW_BUNDLE_DEVTOOL = 'inline-nosources-cheap-module-source-map';

/** The SDK's webpack configuration with {@link WORKFLOW_BUNDLE_DEVTOOL} in place of its inline map with sources. */
export const withoutSources: NonNullable<BundleOptions['webpackConfigHook']> = (config) => ({
  ...config,
  devtool: WORKFLOW_BUNDLE_DEVTOOL,
});

/** Bundles `workflowsPath` as eniflow ships it; returns the bundle's code (with its inline map). */
export async function bundleWorkflows(workflowsPath: string, logger: BundleOptions['logger']): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    ...(logger === undefined ? {} : { logger }),
    webpackConfigHook: withoutSources,
  });
  return code;
}
