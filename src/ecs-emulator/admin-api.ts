import { readFile, writeFile } from 'node:fs/promises';
import type { CallLogEntry } from './call-log.js';
import type { EmulatorCore } from './emulator-core.js';
import type { FaultRule, FaultRuleInput } from './fault-rules.js';
import type { Inventory, StateSnapshot } from './model-types.js';
import type { EmulatorSettings, SettingsPatch } from './settings.js';

/** Reserved path prefix of the admin API; it shares the port with the ECS/VPC API. */
export const ADMIN_PATH_PREFIX = '/__admin/';

/** Filter for {@link EmulatorAdmin.calls}. */
export interface CallLogFilter {
  /** Only calls with a larger `seq`. */
  sinceSeq?: number;
  action?: string;
  /** At most this many, the newest kept. */
  limit?: number;
}

/**
 * The admin operations, the same in process (`startEcsEmulator().admin`) and over HTTP
 * (`EmulatorAdminClient`), so tests and benchmarks can use either.
 */
export interface EmulatorAdmin {
  inventory(): Promise<Inventory>;
  calls(filter?: CallLogFilter): Promise<CallLogEntry[]>;
  clearCalls(): Promise<void>;
  faults(): Promise<FaultRule[]>;
  /** Adds rules (objects or fault-script lines) after the existing ones. */
  addFaults(rules: readonly (FaultRuleInput | string)[]): Promise<FaultRule[]>;
  removeFault(ruleId: string): Promise<void>;
  clearFaults(): Promise<void>;
  settings(): Promise<EmulatorSettings>;
  updateSettings(patch: SettingsPatch): Promise<EmulatorSettings>;
  saveState(): Promise<StateSnapshot>;
  loadState(snapshot: StateSnapshot): Promise<void>;
  /** Writes the state snapshot to a file on the emulator's host. */
  saveStateFile(path: string): Promise<void>;
  loadStateFile(path: string): Promise<void>;
  /** Back to the fixture's initial state (cloud state, faults, tokens, call log, PRNG). */
  reset(): Promise<void>;
}

/** An admin request the HTTP layer could not serve; `status` is the HTTP status to answer. */
export class AdminRequestError extends Error {
  readonly status: number;

  constructor(init: { status: number; message: string }) {
    super(init.message);
    this.status = init.status;
  }
}

/** The in-process implementation of {@link EmulatorAdmin} over the emulator core. */
export function createInProcessAdmin(core: EmulatorCore): EmulatorAdmin {
  const admin: EmulatorAdmin = {
    inventory: () => Promise.resolve(core.model.inventory()),
    calls: (filter = {}) => Promise.resolve(core.callLog.list(filter)),
    clearCalls: () => {
      core.callLog.clear();
      return Promise.resolve();
    },
    faults: () => Promise.resolve(core.faults.list()),
    addFaults: (rules) => Promise.resolve(core.faults.add(rules)),
    removeFault: (ruleId) => {
      if (!core.faults.remove(ruleId)) throw new AdminRequestError({ status: 404, message: `no fault rule ${ruleId}` });
      return Promise.resolve();
    },
    clearFaults: () => {
      core.faults.clear();
      return Promise.resolve();
    },
    settings: () => Promise.resolve(structuredClone(core.settings)),
    updateSettings: (patch) => Promise.resolve(structuredClone(core.updateSettings(patch))),
    saveState: () => Promise.resolve(core.model.snapshot()),
    loadState: (snapshot) => {
      core.loadSnapshot(snapshot);
      return Promise.resolve();
    },
    saveStateFile: async (path) => {
      await writeFile(path, `${JSON.stringify(core.model.snapshot(), null, 2)}\n`);
    },
    loadStateFile: async (path) => {
      core.loadSnapshot(JSON.parse(await readFile(path, 'utf8')) as StateSnapshot);
    },
    reset: () => {
      core.reset();
      return Promise.resolve();
    },
  };
  return admin;
}

function requireField(body: unknown, field: string): unknown {
  if (typeof body !== 'object' || body === null || !(field in body)) {
    throw new AdminRequestError({ status: 400, message: `body needs "${field}"` });
  }
  return (body as Record<string, unknown>)[field];
}

function requireString(body: unknown, field: string): string {
  const value = requireField(body, field);
  if (typeof value !== 'string') throw new AdminRequestError({ status: 400, message: `"${field}" must be a string` });
  return value;
}

function optionalNumber(params: URLSearchParams, name: string): number | undefined {
  const text = params.get(name);
  if (text === null) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value)) throw new AdminRequestError({ status: 400, message: `${name} must be an integer` });
  return value;
}

/**
 * Routes one admin HTTP request (JSON in, JSON out) to {@link EmulatorAdmin}. Returns the JSON answer; throws
 * {@link AdminRequestError} for unknown routes and bad input.
 */
export async function routeAdminRequest(request: {
  admin: EmulatorAdmin;
  method: string;
  path: string;
  search: URLSearchParams;
  body: unknown;
}): Promise<unknown> {
  const { admin, method, body } = request;
  const route = `${method} ${request.path.slice(ADMIN_PATH_PREFIX.length - 1)}`;
  const faultMatch = /^DELETE \/faults\/([^/]+)$/.exec(route);
  if (faultMatch?.[1] !== undefined) {
    await admin.removeFault(decodeURIComponent(faultMatch[1]));
    return { ok: true };
  }
  switch (route) {
    case 'GET /health':
      return { ok: true };
    case 'GET /inventory':
      return admin.inventory();
    case 'GET /calls': {
      const sinceSeq = optionalNumber(request.search, 'sinceSeq');
      const limit = optionalNumber(request.search, 'limit');
      const action = request.search.get('action');
      return {
        entries: await admin.calls({
          ...(sinceSeq === undefined ? {} : { sinceSeq }),
          ...(limit === undefined ? {} : { limit }),
          ...(action === null ? {} : { action }),
        }),
      };
    }
    case 'DELETE /calls':
      await admin.clearCalls();
      return { ok: true };
    case 'GET /faults':
      return { rules: await admin.faults() };
    case 'POST /faults': {
      const rules = requireField(body, 'rules');
      if (!Array.isArray(rules)) throw new AdminRequestError({ status: 400, message: '"rules" must be an array' });
      return { rules: await admin.addFaults(rules as (FaultRuleInput | string)[]) };
    }
    case 'DELETE /faults':
      await admin.clearFaults();
      return { ok: true };
    case 'GET /settings':
      return admin.settings();
    case 'PATCH /settings':
      return admin.updateSettings(body as SettingsPatch);
    case 'GET /state':
      return admin.saveState();
    case 'PUT /state':
      await admin.loadState(body as StateSnapshot);
      return { ok: true };
    case 'POST /state/save':
      await admin.saveStateFile(requireString(body, 'file'));
      return { ok: true };
    case 'POST /state/load':
      await admin.loadStateFile(requireString(body, 'file'));
      return { ok: true };
    case 'POST /reset':
      await admin.reset();
      return { ok: true };
    default:
      throw new AdminRequestError({ status: 404, message: `no admin route ${route}` });
  }
}
