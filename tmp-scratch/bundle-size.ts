import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../src/worker/create-worker.ts';
const quiet = () => undefined;
const logger = { log: quiet, trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet };
for (const devtool of [undefined, 'inline-nosources-source-map', 'inline-nosources-cheap-module-source-map', 'inline-nosources-cheap-source-map']) {
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger, webpackConfigHook: (c) => devtool === undefined ? c : { ...c, devtool } });
  const at = code.lastIndexOf('//# sourceMappingURL=data:');
  const map = JSON.parse(Buffer.from(code.slice(code.indexOf('base64,', at) + 7), 'base64').toString());
  console.log(devtool ?? 'default', 'bundle KiB', (code.length / 1024).toFixed(0), 'code KiB', (at / 1024).toFixed(0), 'sources', map.sources.length, 'sourcesContent', map.sourcesContent?.length ?? 0, 'mappings KiB', (map.mappings.length/1024).toFixed(0));
}
