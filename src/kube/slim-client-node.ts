/**
 * `@kubernetes/client-node` 2.x has one entry: every import of it (even `KubeConfig`, whose module imports the
 * generated index) loads all 65 generated API groups — `gen/types/ObservableAPI.js` (7 MB of source), the request
 * factories of every group under `gen/apis/` (8.5 MB) and `gen/types/ObjectParamAPI.js` — of which eniflow calls three.
 * Their source stays on the V8 heap as strings, and reading and compiling them is most of the package's load cost:
 * about 10 MiB of peak RSS and 0.3–0.4 s of CPU in each process (docs/memory.md, issue 29).
 *
 * A synchronous module hook (`module.registerHooks`, in-thread) rewrites the generated type files as they load: the
 * classes of {@link USED_KUBE_APIS} stay the package's own, unchanged; every other class becomes a stub that throws
 * on construction, and with it goes the import of its request factory, so those files are never read. Models,
 * `ObjectSerializer`, `KubeConfig`, `Watch` and `ListWatch` are untouched. The hook must be registered before the
 * package is first imported: the process entries (src/main.ts, src/watcher/main.ts, src/worker/main.ts) register it
 * and only then import the rest with `import()`. A generator change that the section pattern does not recognise
 * leaves the file as it is (every API loads, as before) and test/unit/kube/slim-client-node.test.ts fails.
 */
import { registerHooks } from 'node:module';
import { TextDecoder } from 'node:util';

/** The generated API groups eniflow constructs (`kubeConfig.makeApiClient(…)`); add one here before using it. */
export const USED_KUBE_APIS: readonly string[] = ['CoreV1Api', 'CustomObjectsApi', 'CoordinationV1Api'];

/** The generated files that hold one class per API group, and the prefix of their class names. */
const GENERATED_TYPES = /\/@kubernetes\/client-node\/dist\/gen\/types\/(ObservableAPI|PromiseAPI|ObjectParamAPI)\.js$/;
const CLASS_PREFIX: Readonly<Record<string, string>> = {
  ObservableAPI: 'Observable',
  PromiseAPI: 'Promise',
  ObjectParamAPI: 'Object',
};

const HERE = 'src/kube/slim-client-node.ts';

/** One generated section: the import its class needs, then the class, closed by a `}` in column 0. */
const SECTION = /^import \{[^}]*\} from (["'])[^"']+\1;\nexport class (\w+) \{\n[\s\S]*?\n\}\n/gm;

export interface SlimmedSource {
  source: string;
  /** API groups kept whole, e.g. `CoreV1Api`. */
  kept: string[];
  /** API groups replaced by a stub. */
  stubbed: string[];
}

/**
 * The generated file's source with every API group outside `keep` replaced by a stub class of the same name (so
 * every import of the name still links). Returns the source unchanged (nothing kept, nothing stubbed) when the
 * file's sections do not match the generator's layout or one of `keep` is missing: a full load, never a broken one.
 */
export function slimGeneratedApis(source: string, classPrefix: string, keep: readonly string[]): SlimmedSource {
  const kept: string[] = [];
  const stubbed: string[] = [];
  const slim = source.replace(SECTION, (section: string, _quote: string, className: string) => {
    const group = className.startsWith(classPrefix) ? className.slice(classPrefix.length) : className;
    if (keep.includes(group)) {
      kept.push(group);
      return section;
    }
    stubbed.push(group);
    const message = `@kubernetes/client-node: ${group} is not loaded in eniflow (add it to USED_KUBE_APIS in ${HERE})`;
    return `export class ${className} { constructor() { throw new Error(${JSON.stringify(message)}); } }\n`;
  });
  const sections = source.split('\nexport class ').length - 1;
  if (kept.length + stubbed.length !== sections || keep.some((group) => !kept.includes(group))) {
    return { source, kept: [], stubbed: [] };
  }
  return { source: slim, kept, stubbed };
}

let registered = false;
const stubbedGroups = new Set<string>();

/** Installs the hook in this thread (idempotent). Later imports of the package load only {@link USED_KUBE_APIS}. */
export function registerSlimClientNode(): void {
  if (registered) return;
  registered = true;
  registerHooks({
    load(url, context, nextLoad) {
      const result = nextLoad(url, context);
      const file = GENERATED_TYPES.exec(url)?.[1];
      if (file === undefined || result.source === undefined) return result;
      const text = typeof result.source === 'string' ? result.source : new TextDecoder().decode(result.source);
      const slim = slimGeneratedApis(text, CLASS_PREFIX[file] ?? '', USED_KUBE_APIS);
      for (const group of slim.stubbed) stubbedGroups.add(group);
      return { ...result, source: slim.source };
    },
  });
}

/** API groups this process stubbed so far (empty before the package loads, or when the hook fell back). */
export function stubbedKubeApis(): string[] {
  return [...stubbedGroups].sort();
}
