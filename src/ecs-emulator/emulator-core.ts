import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { ACTIONS } from './actions/action-registry.js';
import type { ActionDefinition } from './actions/action-types.js';
import { apiError, defaultMessageForCode, defaultStatusForCode, EmulatorApiError } from './api-error.js';
import { CallLog } from './call-log.js';
import { ClientTokenCache } from './client-token-cache.js';
import { CloudModel } from './cloud-model.js';
import { FaultInjector } from './fault-rules.js';
import type { AppliedFault } from './fault-rules.js';
import type { EmulatorFixture } from './fixture.js';
import type { StateSnapshot } from './model-types.js';
import { RateLimiter } from './rate-limiter.js';
import { RequestParams } from './request-params.js';
import { SeededRandom } from './seeded-random.js';
import { applySettingsPatch, defaultSettings } from './settings.js';
import type { EmulatorSettings, LatencySpec } from './settings.js';
import { SignatureVerifier } from './wire-signature.js';

/** One decoded API request as the HTTP layer hands it over. */
export interface ApiCall {
  method: string;
  headers: IncomingHttpHeaders;
  query: Record<string, string>;
}

/** What the HTTP layer must send back: a JSON answer, or a dropped connection. */
export type ApiAnswer = { kind: 'respond'; status: number; body: string; retryAfterMs?: number } | { kind: 'drop' };

/** Fields of the v2 (RPC) signature path that are not action parameters. */
const PROTOCOL_FIELDS = new Set([
  'Action',
  'Version',
  'Format',
  'Timestamp',
  'SignatureNonce',
  'SignatureMethod',
  'SignatureVersion',
  'AccessKeyId',
  'Signature',
]);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The emulator minus HTTP: settings, cloud model, signature check, rate limits, faults, idempotency and the call
 * log, in the order a real gateway applies them. The HTTP server and the admin API both drive this object.
 */
export class EmulatorCore {
  readonly fixture: EmulatorFixture;
  readonly accessKeys: EmulatorFixture['accessKeys'];
  model: CloudModel;
  settings: EmulatorSettings;
  readonly faults: FaultInjector;
  readonly callLog: CallLog;
  private random: SeededRandom;
  private readonly limiter = new RateLimiter();
  private readonly verifier: SignatureVerifier;
  private readonly tokens: ClientTokenCache;
  private readonly clock: () => number;
  private readonly logger: Logger | undefined;

  constructor(options: { fixture: EmulatorFixture; clock?: () => number; logger?: Logger; settings?: unknown }) {
    this.fixture = options.fixture;
    this.accessKeys = options.fixture.accessKeys;
    this.clock = options.clock ?? Date.now;
    this.logger = options.logger;
    let settings = applySettingsPatch(defaultSettings(), options.fixture.settings ?? {});
    if (options.settings !== undefined) settings = applySettingsPatch(settings, options.settings);
    this.settings = settings;
    this.random = new SeededRandom(settings.seed);
    this.faults = new FaultInjector(() => this.random);
    this.faults.add(options.fixture.faults ?? []);
    this.callLog = new CallLog(settings.callLogCapacity);
    this.tokens = new ClientTokenCache({ retentionMs: settings.limits.clientTokenRetentionMs, clock: this.clock });
    this.verifier = new SignatureVerifier(this.accessKeys);
    this.limiter.configure(settings.rateLimitsPerMinute);
    this.model = this.freshModel();
  }

  private freshModel(): CloudModel {
    return CloudModel.fromFixture(this.fixture, {
      clock: this.clock,
      limits: this.settings.limits,
      transitionDelays: this.settings.transitionDelays,
    });
  }

  /** Applies a settings patch (validated); changing the seed restarts the PRNG, rate limits restart full. */
  updateSettings(patch: unknown): EmulatorSettings {
    const next = applySettingsPatch(this.settings, patch);
    const seedGiven = typeof patch === 'object' && patch !== null && 'seed' in patch;
    this.settings = next;
    if (seedGiven) this.random = new SeededRandom(next.seed);
    this.limiter.configure(next.rateLimitsPerMinute);
    if (next.callLogCapacity !== this.callLog.capacity) this.callLog.resize(next.callLogCapacity);
    this.tokens.setRetention(next.limits.clientTokenRetentionMs);
    this.model.limits = next.limits;
    this.model.transitionDelays = next.transitionDelays;
    return next;
  }

  /** Back to the fixture's initial state: cloud state, faults, tokens, call log and PRNG. */
  reset(): void {
    this.model = this.freshModel();
    this.faults.clear();
    this.faults.add(this.fixture.faults ?? []);
    this.tokens.clear();
    this.callLog.clear();
    this.random = new SeededRandom(this.settings.seed);
  }

  /** Replaces the cloud state with a snapshot; ClientToken memory is cleared since it belonged to the old state. */
  loadSnapshot(snapshot: StateSnapshot): void {
    this.model = CloudModel.fromSnapshot(snapshot, {
      clock: this.clock,
      limits: this.settings.limits,
      transitionDelays: this.settings.transitionDelays,
    });
    this.tokens.clear();
  }

  private latencyFor(action: string): number {
    const spec: LatencySpec | undefined = this.settings.latency[action] ?? this.settings.latency['*'];
    if (spec === undefined) return 0;
    if ('fixedMs' in spec) return spec.fixedMs;
    return this.random.integer({ min: spec.minMs, max: spec.maxMs });
  }

  private errorBody(request: { error: EmulatorApiError; requestId: string; product: string }): string {
    const { error, requestId, product } = request;
    return JSON.stringify({
      RequestId: requestId,
      HostId: `${product.toLowerCase()}.aliyuncs.com`,
      Code: error.code,
      Message: error.message,
      Recommend: `https://api.aliyun.com/troubleshoot?q=${error.code}&product=${product}`,
    });
  }

  /** Serves one API call end to end. Never throws: unexpected failures answer `InternalError` (500). */
  async handle(call: ApiCall): Promise<ApiAnswer> {
    const startedAt = performance.now();
    const requestId = randomUUID().toUpperCase();
    const action = headerValue(call.headers['x-acs-action']) ?? call.query['Action'] ?? '';
    const definition = ACTIONS.get(action);
    const product = definition?.product ?? 'Ecs';
    const trace: CallTrace = { fault: null };
    let faultLabel: string | null = null;
    let applied = false;
    let retryAfterMs: number | undefined;
    let status = 200;
    let code = 'Success';
    let body: string;
    let drop = false;
    try {
      const outcome = await this.run({ call, action, definition, requestId, trace });
      applied = outcome.applied;
      body = outcome.body;
      const chosen = trace.fault;
      if (chosen !== null) faultLabel = `${chosen.ruleId}:${chosen.effect.kind}`;
      if (chosen?.effect.kind === 'lostResponse') {
        const lostCode = chosen.effect.code ?? 'ServiceUnavailable';
        throw new EmulatorApiError({
          code: lostCode,
          httpStatus: chosen.effect.status ?? defaultStatusForCode(lostCode),
          message: defaultMessageForCode(lostCode),
        });
      }
      if (chosen?.effect.kind === 'dropConnection' && chosen.effect.afterApply) drop = true;
    } catch (caught) {
      let error: EmulatorApiError;
      if (caught instanceof EmulatorApiError) {
        error = caught;
      } else if (caught instanceof DropConnection) {
        error = apiError('InternalError');
        drop = true;
      } else {
        this.logger?.error({ err: caught, action }, 'emulator action failed unexpectedly');
        error = apiError('InternalError');
      }
      if (caught instanceof ThrottledCall) {
        retryAfterMs = caught.retryAfterMs;
        faultLabel = 'rateLimit';
      }
      if (trace.fault !== null) faultLabel = `${trace.fault.ruleId}:${trace.fault.effect.kind}`;
      status = error.httpStatus;
      code = error.code;
      body = this.errorBody({ error, requestId, product });
    }
    this.callLog.append({
      time: new Date().toISOString(),
      action,
      params: call.query,
      httpStatus: drop ? 0 : status,
      code: drop ? 'ConnectionDropped' : code,
      requestId,
      latencyMs: Math.round((performance.now() - startedAt) * 1000) / 1000,
      applied,
      fault: faultLabel,
    });
    if (drop) return { kind: 'drop' };
    return { kind: 'respond', status, body, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  }

  private async run(request: {
    call: ApiCall;
    action: string;
    definition: ActionDefinition | undefined;
    requestId: string;
    trace: CallTrace;
  }): Promise<{ body: string; applied: boolean }> {
    const { call, action, definition, requestId } = request;
    if (action === '') throw apiError('MissingParameter', 'The input parameter "Action" is not supplied.');
    if (definition === undefined) throw apiError('InvalidAction.NotFound');
    const version = headerValue(call.headers['x-acs-version']) ?? call.query['Version'];
    if (version !== definition.version) throw apiError('InvalidVersion');
    if (this.settings.verifySignatures) {
      const rejection = this.verifier.verify({ ...call, nowMs: Date.now() });
      if (rejection !== null) throw rejection;
    }
    const admitted = this.limiter.take({ action, nowMs: this.clock() });
    if (!admitted.allowed) throw new ThrottledCall(admitted.retryAfterMs);
    const fault = this.faults.pick(action);
    request.trace.fault = fault;
    const delayMs = this.latencyFor(action) + (fault?.effect.kind === 'delay' ? fault.effect.ms : 0);
    if (delayMs > 0) await sleep(delayMs);
    // An error fault answers before the service acts (a gateway or front-end failure) and leaves the token
    // unspent, unless it says it failed inside the service (`poisonsToken`, handled with the token below).
    if (fault?.effect.kind === 'error' && fault.effect.poisonsToken !== true) throw this.faultError(fault.effect);
    if (fault?.effect.kind === 'dropConnection' && !fault.effect.afterApply) throw new DropConnection();
    const params = this.actionParams(call.query);
    if (definition.requiresRegion) {
      const regionId = params.requiredString('RegionId');
      if (regionId !== this.model.regionId) throw apiError('InvalidRegionId.NotFound');
    } else {
      const regionId = params.string('RegionId');
      if (regionId !== undefined && regionId !== this.model.regionId) throw apiError('InvalidRegionId.NotFound');
    }
    const token = definition.idempotent ? params.string('ClientToken') : undefined;
    const fingerprint = token === undefined ? '' : ClientTokenCache.fingerprint(params.raw);
    if (token !== undefined) {
      const cached = this.tokens.lookup({ action, token });
      if (cached !== undefined) {
        if (cached.fingerprint !== fingerprint) throw apiError('IdempotentParameterMismatch');
        if (cached.failed !== undefined) throw apiError('IdempotentFailed');
        return { body: JSON.stringify({ RequestId: requestId, ...cached.body }), applied: false };
      }
    }
    let result: Record<string, unknown>;
    try {
      if (fault?.effect.kind === 'error' && fault.effect.poisonsToken === true) throw this.faultError(fault.effect);
      result = definition.handle({
        params,
        model: this.model,
        failAttach: fault?.effect.kind === 'attachFailure',
      });
    } catch (error) {
      // A failure inside the service spends the token: its reuse with the same parameters is IdempotentFailed.
      // "Try it later" answers (a conflict, a transition) leave it reusable.
      if (token !== undefined && error instanceof EmulatorApiError && !RETRY_LATER_CODES.includes(error.code)) {
        this.tokens.remember({ action, token, result: { fingerprint, failed: { code: error.code } } });
      }
      throw error;
    }
    if (token !== undefined) this.tokens.remember({ action, token, result: { fingerprint, body: result } });
    return { body: JSON.stringify({ RequestId: requestId, ...result }), applied: true };
  }

  private faultError(effect: Extract<AppliedFault['effect'], { kind: 'error' }>): EmulatorApiError {
    return new EmulatorApiError({
      code: effect.code,
      httpStatus: effect.status ?? defaultStatusForCode(effect.code),
      message: effect.message ?? defaultMessageForCode(effect.code),
    });
  }

  private actionParams(query: Record<string, string>): RequestParams {
    if (query['Signature'] === undefined) return new RequestParams(query);
    const params: Record<string, string> = {};
    for (const [key, value] of Object.entries(query)) if (!PROTOCOL_FIELDS.has(key)) params[key] = value;
    return new RequestParams(params);
  }
}

/** Answers that mean "try it later": the failed call did not spend its ClientToken. */
const RETRY_LATER_CODES = [
  'Operation.Conflict',
  'OperationConflict',
  'InvalidOperation.InvalidEniState',
  'IdempotentProcessing',
];

/** What the call log needs to know about a call beyond its answer. */
interface CallTrace {
  fault: AppliedFault | null;
}

/** Internal signal: answer `Throttling.User` with a retry-after hint. */
class ThrottledCall extends EmulatorApiError {
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number) {
    const error = apiError('Throttling.User');
    super({ code: error.code, httpStatus: error.httpStatus, message: error.message });
    this.retryAfterMs = retryAfterMs;
  }
}

/** Internal signal: close the connection without answering. */
class DropConnection extends Error {}
