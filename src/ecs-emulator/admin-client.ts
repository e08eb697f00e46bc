import type { CallLogFilter, EmulatorAdmin } from './admin-api.js';
import { ADMIN_PATH_PREFIX } from './admin-api.js';
import type { CallLogEntry } from './call-log.js';
import type { FaultRule, FaultRuleInput } from './fault-rules.js';
import type { Inventory, StateSnapshot } from './model-types.js';
import type { EmulatorSettings, SettingsPatch } from './settings.js';

/** A typed client of the emulator's admin HTTP API, for tests and benchmarks that run the emulator elsewhere. */
export class EmulatorAdminClient implements EmulatorAdmin {
  private readonly baseUrl: string;

  /** `endpoint` is the emulator's `host:port`, as printed at start. */
  constructor(endpoint: string) {
    this.baseUrl = `http://${endpoint}${ADMIN_PATH_PREFIX.slice(0, -1)}`;
  }

  private async request<T>(route: { method: string; path: string; body?: unknown }): Promise<T> {
    const response = await fetch(`${this.baseUrl}${route.path}`, {
      method: route.method,
      ...(route.body === undefined
        ? {}
        : { body: JSON.stringify(route.body), headers: { 'content-type': 'application/json' } }),
    });
    const payload: unknown = await response.json();
    if (!response.ok) {
      const message = (payload as { error?: string }).error ?? `HTTP ${response.status}`;
      throw new Error(`emulator admin ${route.method} ${route.path}: ${message}`);
    }
    return payload as T;
  }

  inventory(): Promise<Inventory> {
    return this.request({ method: 'GET', path: '/inventory' });
  }

  async calls(filter: CallLogFilter = {}): Promise<CallLogEntry[]> {
    const search = new URLSearchParams();
    if (filter.sinceSeq !== undefined) search.set('sinceSeq', String(filter.sinceSeq));
    if (filter.action !== undefined) search.set('action', filter.action);
    if (filter.limit !== undefined) search.set('limit', String(filter.limit));
    const query = search.size > 0 ? `?${search.toString()}` : '';
    const answer = await this.request<{ entries: CallLogEntry[] }>({ method: 'GET', path: `/calls${query}` });
    return answer.entries;
  }

  async clearCalls(): Promise<void> {
    await this.request({ method: 'DELETE', path: '/calls' });
  }

  async faults(): Promise<FaultRule[]> {
    return (await this.request<{ rules: FaultRule[] }>({ method: 'GET', path: '/faults' })).rules;
  }

  async addFaults(rules: readonly (FaultRuleInput | string)[]): Promise<FaultRule[]> {
    return (await this.request<{ rules: FaultRule[] }>({ method: 'POST', path: '/faults', body: { rules } })).rules;
  }

  async removeFault(ruleId: string): Promise<void> {
    await this.request({ method: 'DELETE', path: `/faults/${encodeURIComponent(ruleId)}` });
  }

  async clearFaults(): Promise<void> {
    await this.request({ method: 'DELETE', path: '/faults' });
  }

  settings(): Promise<EmulatorSettings> {
    return this.request({ method: 'GET', path: '/settings' });
  }

  updateSettings(patch: SettingsPatch): Promise<EmulatorSettings> {
    return this.request({ method: 'PATCH', path: '/settings', body: patch });
  }

  saveState(): Promise<StateSnapshot> {
    return this.request({ method: 'GET', path: '/state' });
  }

  async loadState(snapshot: StateSnapshot): Promise<void> {
    await this.request({ method: 'PUT', path: '/state', body: snapshot });
  }

  async saveStateFile(path: string): Promise<void> {
    await this.request({ method: 'POST', path: '/state/save', body: { file: path } });
  }

  async loadStateFile(path: string): Promise<void> {
    await this.request({ method: 'POST', path: '/state/load', body: { file: path } });
  }

  async reset(): Promise<void> {
    await this.request({ method: 'POST', path: '/reset' });
  }
}
