/**
 * Loads a generated Alibaba Cloud SDK client (`@alicloud/ecs20140526`, `@alicloud/vpc20160428`) without its models.
 *
 * Each package's `dist/client.js` requires `./models/model`, an index that requires every generated model file
 * (1,153 files for the two clients, ≈ 63 MiB of heap and 1–2 s of CPU), although eniflow uses about ten of them.
 * Here `client.js` itself runs unchanged (the generated client and its request/response shapes are kept), but its
 * `require('./models/model')` is answered with an object whose properties load their model file on first access.
 * The index is regular generated code (`var X_1 = require("./X")` and one `Object.defineProperty(exports, "Name", …
 * X_1.Name …)` per export), read here as text to learn which file holds which model.
 *
 * A package whose layout no longer matches (no index, an unknown line) is loaded eagerly with a plain `require`:
 * correct, only heavier; test/unit/activities/lazy-sdk-module.test.ts fails then, so an upgrade does not silently
 * bring the cost back.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { compileFunction } from 'node:vm';

const MODEL_INDEX = './models/model';
const REQUIRE_LINE = /^var (\w+) = require\("\.\/([\w.-]+)"\);$/;
const EXPORT_LINE =
  /^Object\.defineProperty\(exports, "(\w+)", \{ enumerable: true, get: function \(\) \{ return (\w+)\.(\w+); \} \}\);$/;
/** Lines of the index that carry no export: the prologue (`"use strict"`, `exports.A = exports.B = void 0`), the map. */
const IGNORED_LINE =
  /^(?:"use strict";|Object\.defineProperty\(exports, "__esModule", \{ value: true \}\);|exports\.[\w. =]+void 0;|\/\/# sourceMappingURL=.*|)$/;

/** How each export of a model index is reached: the file (relative to the index) and its export's name. */
export type ModelIndex = Map<string, { file: string; exportName: string }>;

/** Reads a generated `models/model.js`; undefined when a line is not one of the generated shapes. */
export function parseModelIndex(source: string): ModelIndex | undefined {
  const files = new Map<string, string>();
  const index: ModelIndex = new Map();
  for (const line of source.split('\n')) {
    const trimmed = line.trimEnd();
    const required = REQUIRE_LINE.exec(trimmed);
    if (required !== null) {
      const [, variable = '', file = ''] = required;
      files.set(variable, file);
      continue;
    }
    const exported = EXPORT_LINE.exec(trimmed);
    if (exported !== null) {
      const [, name = '', variable = '', exportName = ''] = exported;
      const file = files.get(variable);
      if (file === undefined) return undefined;
      index.set(name, { file, exportName });
      continue;
    }
    if (!IGNORED_LINE.test(trimmed)) return undefined;
  }
  return index.size > 0 ? index : undefined;
}

/**
 * The stand-in for `models/model`: every model a getter that requires its file on first access (`require` keeps it).
 * `__esModule` makes the client's `__importStar` use the object as is and its `__exportStar` copy the getters (not
 * their values) onto the client module's exports, so `$Ecs.CreateNetworkInterfaceRequest` stays lazy too.
 */
function lazyModels(index: ModelIndex, requireModel: (file: string) => Record<string, unknown>): object {
  const models: Record<string, unknown> = {};
  Object.defineProperty(models, '__esModule', { value: true });
  for (const [name, { file, exportName }] of index) {
    Object.defineProperty(models, name, { enumerable: true, get: () => requireModel(file)[exportName] });
  }
  return models;
}

/** Whether the last `loadSdkModule` of `packageName` skipped its models (tests; the fallback is eager). */
const lazilyLoaded = new Set<string>();
export function loadedLazily(packageName: string): boolean {
  return lazilyLoaded.has(packageName);
}

/**
 * The exports of SDK package `packageName` (its `default` is the client class, its other exports the models), with
 * models loaded on first use. The module is registered in the CommonJS cache under `client.js`, so a plain
 * `require` of the package elsewhere gets the same client class instead of loading a second, eager copy.
 */
export function loadSdkModule(packageName: string): unknown {
  const require = createRequire(import.meta.url);
  const clientFile = require.resolve(packageName);
  const cached = require.cache[clientFile];
  if (cached !== undefined) return cached.exports as unknown;

  const clientSource = readFileSync(clientFile, 'utf8');
  const modelsDir = join(dirname(clientFile), 'models');
  let index: ModelIndex | undefined;
  try {
    index = clientSource.includes(`require("${MODEL_INDEX}")`)
      ? parseModelIndex(readFileSync(join(modelsDir, 'model.js'), 'utf8'))
      : undefined;
  } catch {
    index = undefined;
  }
  if (index === undefined) {
    lazilyLoaded.delete(packageName);
    return require(packageName) as unknown;
  }

  const clientRequire = createRequire(clientFile);
  const files = new Map<string, Record<string, unknown>>();
  const models = lazyModels(index, (file) => {
    let exports = files.get(file);
    if (exports === undefined) {
      exports = clientRequire(`./models/${file}`) as Record<string, unknown>;
      files.set(file, exports);
    }
    return exports;
  });
  const module = new Module(clientFile);
  module.filename = clientFile;
  const run = compileFunction(clientSource, ['exports', 'require', 'module', '__filename', '__dirname'], {
    filename: clientFile,
  });
  run.call(
    module.exports,
    module.exports,
    (id: string): unknown => (id === MODEL_INDEX ? models : (clientRequire(id) as unknown)),
    module,
    clientFile,
    dirname(clientFile),
  );
  module.loaded = true;
  require.cache[clientFile] = module;
  lazilyLoaded.add(packageName);
  return module.exports as unknown;
}
