import type { SeededRandom } from './seeded-random.js';

/** What an injected fault does to one call. */
export type FaultEffect =
  /** Answer with this error; the call changes nothing. */
  | {
      kind: 'error';
      code: string;
      status?: number;
      message?: string;
      /** The service failed after taking the request (script word `spent`): the ClientToken is spent. */
      poisonsToken?: boolean;
    }
  /** Apply the call, then answer with this error (default 503 ServiceUnavailable): a lost response. */
  | { kind: 'lostResponse'; code?: string; status?: number }
  /** Destroy the connection without answering; with `afterApply` the call is applied first (a lost response). */
  | { kind: 'dropConnection'; afterApply: boolean }
  /** Hold the answer this long (beyond the client's read timeout to provoke RequestTimeoutError). */
  | { kind: 'delay'; ms: number }
  /** AttachNetworkInterface only: answer success, then fall back from Attaching to Available. */
  | { kind: 'attachFailure' };

/** A fault rule as given in a fixture or to the admin API; `count` (scripted) or `rate` (random) says when it fires. */
export interface FaultRuleInput {
  /** Action name, or `*` for every action. */
  action: string;
  effect: FaultEffect;
  /** Fire on the next `count` matching calls, then retire. */
  count?: number;
  /** Fire on each matching call with this probability (seeded PRNG). */
  rate?: number;
  /** Let this many matching calls pass before the rule starts to fire. */
  skip?: number;
}

/** A live rule, as the admin API lists it. */
export interface FaultRule extends FaultRuleInput {
  id: string;
  /** Times it has fired. */
  fired: number;
}

/** A fault chosen for one call. */
export interface AppliedFault {
  ruleId: string;
  effect: FaultEffect;
}

function parseStatus(text: string | undefined, line: string): number | undefined {
  if (text === undefined) return undefined;
  const status = Number(text);
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    throw new Error(`fault script "${line}": bad status ${text}`);
  }
  return status;
}

/**
 * Parses one line of the fault script syntax (docs/ecs-emulator.md):
 * `<Action|*> [skip <k>] (next <n> | rate <p> | always) <effect>`, where effect is `error <Code> [<status>] [spent]`,
 * `lost [<Code> [<status>]]`, `lost drop`, `drop`, `delay <ms>` or `attach-fail`.
 */
export function parseFaultScript(line: string): FaultRuleInput {
  const words = line.trim().split(/\s+/);
  const fail = (why: string): never => {
    throw new Error(`fault script "${line}": ${why}`);
  };
  let index = 0;
  const nextWord = (): string | undefined => words[index++];
  const action = nextWord() ?? fail('missing action');
  const rule: Partial<FaultRuleInput> & { action: string } = { action };
  let word = nextWord();
  if (word === 'skip') {
    rule.skip = Number(nextWord());
    if (!Number.isInteger(rule.skip) || rule.skip < 0) fail('skip needs a whole number');
    word = nextWord();
  }
  if (word === 'next') {
    rule.count = Number(nextWord());
    if (!Number.isInteger(rule.count) || rule.count < 1) fail('next needs a whole number ≥ 1');
  } else if (word === 'rate') {
    rule.rate = Number(nextWord());
    if (!(rule.rate >= 0 && rule.rate <= 1)) fail('rate needs a probability between 0 and 1');
  } else if (word !== 'always') {
    fail('expected next <n>, rate <p> or always');
  }
  const kind = nextWord();
  const args = words.slice(index);
  switch (kind ?? '') {
    case 'error': {
      const code = args[0] ?? fail('error needs a code');
      const spent = args.at(-1) === 'spent';
      const status = parseStatus(args[1] === 'spent' ? undefined : args[1], line);
      rule.effect = {
        kind: 'error',
        code,
        ...(status === undefined ? {} : { status }),
        ...(spent ? { poisonsToken: true } : {}),
      };
      break;
    }
    case 'lost': {
      if (args[0] === 'drop') {
        rule.effect = { kind: 'dropConnection', afterApply: true };
        break;
      }
      const status = parseStatus(args[1], line);
      rule.effect = {
        kind: 'lostResponse',
        ...(args[0] === undefined ? {} : { code: args[0] }),
        ...(status === undefined ? {} : { status }),
      };
      break;
    }
    case 'drop':
      rule.effect = { kind: 'dropConnection', afterApply: false };
      break;
    case 'delay': {
      const ms = Number(args[0]);
      if (!Number.isFinite(ms) || ms < 0) fail('delay needs milliseconds');
      rule.effect = { kind: 'delay', ms };
      break;
    }
    case 'attach-fail':
      rule.effect = { kind: 'attachFailure' };
      break;
    default:
      fail('expected an effect: error, lost, drop, delay or attach-fail');
  }
  return rule as FaultRuleInput;
}

function checkRule(input: unknown): FaultRuleInput {
  if (typeof input === 'string') return parseFaultScript(input);
  if (typeof input !== 'object' || input === null) throw new Error('fault rule: expected an object or a script line');
  const rule = input as Partial<FaultRuleInput>;
  if (typeof rule.action !== 'string' || rule.action === '') throw new Error('fault rule: action is required');
  const effect = rule.effect as { kind?: unknown } | undefined;
  const kinds = ['error', 'lostResponse', 'dropConnection', 'delay', 'attachFailure'];
  if (typeof effect?.kind !== 'string' || !kinds.includes(effect.kind)) {
    throw new Error(`fault rule: effect.kind must be one of ${kinds.join(', ')}`);
  }
  if (effect.kind === 'error' && typeof (effect as { code?: unknown }).code !== 'string') {
    throw new Error('fault rule: an error effect needs a code');
  }
  if (rule.count !== undefined && !(Number.isInteger(rule.count) && rule.count >= 1)) {
    throw new Error('fault rule: count must be a whole number ≥ 1');
  }
  if (rule.rate !== undefined && !(rule.rate >= 0 && rule.rate <= 1)) {
    throw new Error('fault rule: rate must be in [0, 1]');
  }
  return rule as FaultRuleInput;
}

/**
 * The active fault rules. Rules are checked in the order they were added; the first one that fires decides the
 * call's fault. Scripted rules (`count`) retire once spent; rules with neither `count` nor `rate` fire always.
 */
export class FaultInjector {
  private rules: (FaultRule & { skipLeft: number; countLeft: number | null })[] = [];
  private nextId = 1;
  private readonly random: () => SeededRandom;

  constructor(random: () => SeededRandom) {
    this.random = random;
  }

  /** Validates and adds rules (objects or script lines); returns them with their ids. */
  add(inputs: readonly unknown[]): FaultRule[] {
    const checked = inputs.map(checkRule);
    const added = checked.map((input) => ({
      ...input,
      id: `fault-${this.nextId++}`,
      fired: 0,
      skipLeft: input.skip ?? 0,
      countLeft: input.count ?? null,
    }));
    this.rules.push(...added);
    return added.map((rule) => this.publicView(rule));
  }

  remove(ruleId: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((rule) => rule.id !== ruleId);
    return this.rules.length !== before;
  }

  clear(): void {
    this.rules = [];
  }

  list(): FaultRule[] {
    return this.rules.map((rule) => this.publicView(rule));
  }

  private publicView(rule: FaultRule & { skipLeft: number; countLeft: number | null }): FaultRule {
    return {
      id: rule.id,
      action: rule.action,
      effect: rule.effect,
      fired: rule.fired,
      ...(rule.rate === undefined ? {} : { rate: rule.rate }),
      ...(rule.skipLeft > 0 ? { skip: rule.skipLeft } : {}),
      ...(rule.countLeft === null ? {} : { count: rule.countLeft }),
    };
  }

  /** Picks the fault for one call of `action`, or null. Cheap when no rule exists (the benchmark path). */
  pick(action: string): AppliedFault | null {
    if (this.rules.length === 0) return null;
    for (const rule of this.rules) {
      if (rule.action !== '*' && rule.action !== action) continue;
      if (rule.skipLeft > 0) {
        rule.skipLeft--;
        continue;
      }
      if (rule.countLeft !== null) {
        rule.countLeft--;
        if (rule.countLeft === 0) this.rules = this.rules.filter((other) => other !== rule);
      } else if (rule.rate !== undefined && this.random().next() >= rule.rate) {
        continue;
      }
      rule.fired++;
      return { ruleId: rule.id, effect: rule.effect };
    }
    return null;
  }
}
