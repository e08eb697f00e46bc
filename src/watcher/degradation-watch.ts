import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';

import { parseDegradationLevel } from '../ipam/index.js';
import type { DegradationLevel, DegradationSetting } from '../ipam/index.js';
import { ResourceInformer } from '../kube/resource-informer.js';
import { abortOptions } from '../kube-request.js';
import type { Logger } from '../logger.js';
import { DEGRADATION_KEY } from './watcher-config.js';

/** The part of the control ConfigMap that matters. */
interface ControlView {
  nodeName: '';
  degradation: string | undefined;
}

/** Counters of the degradation switch, for metrics and tests. */
export interface DegradationCounters {
  level: DegradationLevel;
  /** Where the level comes from: the ConfigMap, or the configured default while it is absent. */
  source: 'configMap' | 'default';
  /** Changes of level seen since start. */
  changes: number;
  /** ConfigMap values that were not a level (the last valid level was kept). */
  invalidValues: number;
  /** Signals that delivered a change to a workflow, and those that failed after their retries. */
  signalsSent: number;
  signalFailures: number;
  /** When the last change reached every workflow it was sent to, ms after it was seen (undefined before one). */
  lastBroadcastMs?: number;
}

/**
 * The cluster's degradation switch, as an operator sets it: one ConfigMap (`degradation: l0|l1|off`) watched by an
 * informer, the configured level while it is absent. Each setting carries the ConfigMap's resourceVersion, so that a
 * workflow can tell a late signal from a newer one. A change of level is handed to `onChange` (the watcher signals
 * every node workflow); a value that is not a level is refused with an error log and the last valid level is kept.
 */
export class DegradationWatch {
  readonly synced: Promise<void>;
  readonly counters: DegradationCounters;
  private readonly informer: ResourceInformer<V1ConfigMap, ControlView, true>;
  private readonly key: string;
  private readonly defaultLevel: DegradationLevel;
  private readonly logger: Logger;
  private setting: DegradationSetting;

  constructor(options: {
    kubeConfig: KubeConfig;
    logger: Logger;
    watch: { serverTimeoutSeconds: number; idleTimeoutMs: number; listTimeoutMs: number };
    configMap: { namespace: string; name: string };
    defaultLevel: DegradationLevel;
    onChange: (setting: DegradationSetting, previous: DegradationLevel) => void;
  }) {
    const { namespace, name } = options.configMap;
    this.key = `${namespace}/${name}`;
    this.defaultLevel = options.defaultLevel;
    this.logger = options.logger;
    this.setting = { level: options.defaultLevel, revision: '0' };
    this.counters = {
      level: options.defaultLevel,
      source: 'default',
      changes: 0,
      invalidValues: 0,
      signalsSent: 0,
      signalFailures: 0,
    };
    const core = options.kubeConfig.makeApiClient(CoreV1Api);
    const fieldSelector = `metadata.name=${name}`;
    this.informer = new ResourceInformer<V1ConfigMap, ControlView, true>({
      name: 'control-configmap',
      kubeConfig: options.kubeConfig,
      logger: options.logger,
      watch: options.watch,
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      fieldSelector,
      list: (signal) => core.listNamespacedConfigMap({ namespace, fieldSelector }, abortOptions(signal)),
      view: (configMap) => ({ nodeName: '', degradation: configMap.data?.[DEGRADATION_KEY] }),
      change: (before, after) =>
        before?.degradation === after?.degradation && (before === undefined) === (after === undefined)
          ? undefined
          : true,
      onChange: (_change, origin) => {
        const previous = this.setting.level;
        if (
          this.refresh(origin.resourceVersion ?? this.informer.resourceVersion()) &&
          this.setting.level !== previous
        ) {
          this.counters.changes += 1;
          options.onChange(this.setting, previous);
        }
      },
    });
    this.synced = this.informer.synced.then(() => {
      this.refresh(this.informer.resourceVersion());
    });
  }

  /** The setting every signal and start carries now (the configured default, revision 0, until the first list). */
  current(): DegradationSetting {
    return this.setting;
  }

  start(): void {
    this.informer.start();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
  }

  /** Reads the ConfigMap's view into the setting; false when its value is not a level (the setting stays). */
  private refresh(revision: string): boolean {
    const view = this.informer.get(this.key);
    const parsed = parseDegradationLevel(view?.degradation);
    if (!parsed.ok) {
      this.counters.invalidValues += 1;
      this.logger.error(
        { configMap: this.key, value: view?.degradation, kept: this.setting.level },
        `Control ConfigMap: ${parsed.message}; the level stays ${this.setting.level}`,
      );
      return false;
    }
    // An absent key (or ConfigMap) means the configured default; a revision newer than any held keeps the order.
    const level = view?.degradation === undefined ? this.defaultLevel : parsed.level;
    this.setting = { level, revision: revision === '' ? '0' : revision };
    this.counters.level = level;
    this.counters.source = view?.degradation === undefined ? 'default' : 'configMap';
    return true;
  }
}
