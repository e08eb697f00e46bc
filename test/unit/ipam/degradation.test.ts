import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  degradationGates,
  degradationNotice,
  degradationSummary,
  heldBackWork,
  isDegradationSetting,
  isDegraded,
  isNewerDegradation,
  openedGates,
  parseDegradationLevel,
} from '../../../src/ipam/index.js';
import type { DegradationLevel } from '../../../src/ipam/index.js';

void describe('degradation gates per level (Terway docs/degradation.md)', () => {
  const rows: { level: DegradationLevel; cloud: boolean; allocate: boolean; release: boolean; sync: boolean }[] = [
    // Off: every call.
    { level: 'off', cloud: true, allocate: true, release: true, sync: true },
    // L1: "stops making OpenAPI requests that release resources, but continues to make requests that allocate".
    { level: 'l1', cloud: true, allocate: true, release: false, sync: false },
    // L0: "all OpenAPI requests are stopped": only the cached ENIs and IPs serve pods.
    { level: 'l0', cloud: false, allocate: false, release: false, sync: false },
  ];
  for (const row of rows) {
    void it(`${row.level}: cloud ${row.cloud}, allocate ${row.allocate}, release ${row.release}, sync ${row.sync}`, () => {
      const { level, ...expected } = row;
      assert.deepEqual(degradationGates(level), expected);
      assert.equal(isDegraded(level), level !== 'off');
    });
  }

  void it('never lets a level release or sync without also allowing the calls below it', () => {
    for (const row of rows) {
      const gates = degradationGates(row.level);
      if (gates.release || gates.sync || gates.allocate) assert.equal(gates.cloud, true, row.level);
    }
  });
});

void describe('parsing the operator’s level', () => {
  const rows: { text: string | undefined; level?: DegradationLevel }[] = [
    { text: undefined, level: 'off' },
    { text: '', level: 'off' },
    { text: ' off ', level: 'off' },
    { text: 'none', level: 'off' },
    { text: 'l0', level: 'l0' },
    { text: 'L1', level: 'l1' },
    { text: 'l2' },
    { text: 'true' },
  ];
  for (const row of rows) {
    void it(`${JSON.stringify(row.text)} → ${row.level ?? 'refused'}`, () => {
      const parsed = parseDegradationLevel(row.text);
      if (row.level === undefined) {
        assert.equal(parsed.ok, false);
        assert.match(parsed.ok ? '' : parsed.message, /"l0", "l1" or "off"/);
      } else {
        assert.deepEqual(parsed, { ok: true, level: row.level });
      }
    });
  }
});

void describe('which setting a workflow keeps', () => {
  const rows: { held?: string; offered: string; taken: boolean; why: string }[] = [
    { offered: '5', taken: true, why: 'nothing held yet' },
    { held: '5', offered: '6', taken: true, why: 'newer ConfigMap revision' },
    { held: '6', offered: '5', taken: false, why: 'a late signal of an older revision' },
    { held: '6', offered: '6', taken: true, why: 'the same setting again' },
    { held: '0', offered: '12', taken: true, why: 'the ConfigMap over the configured default' },
    { held: '12', offered: 'x', taken: true, why: 'a revision that does not compare: the newest word wins' },
  ];
  for (const row of rows) {
    void it(`${row.why}: ${row.held ?? '-'} then ${row.offered} → ${row.taken ? 'taken' : 'ignored'}`, () => {
      const held = row.held === undefined ? undefined : { level: 'l1' as const, revision: row.held };
      assert.equal(isNewerDegradation(held, { level: 'l0', revision: row.offered }), row.taken);
    });
  }
});

void describe('what a change of level owes', () => {
  const rows: { before: DegradationLevel; after: DegradationLevel; opened: string[]; event?: string }[] = [
    { before: 'off', after: 'off', opened: [] },
    { before: 'off', after: 'l1', opened: [], event: 'Warning DegradationHoldsBack' },
    { before: 'off', after: 'l0', opened: [], event: 'Warning DegradationHoldsBack' },
    { before: 'l1', after: 'l0', opened: [], event: 'Warning DegradationHoldsBack' },
    { before: 'l0', after: 'l1', opened: ['allocate', 'cloud'], event: 'Warning DegradationHoldsBack' },
    { before: 'l1', after: 'off', opened: ['release', 'sync'], event: 'Normal DegradationLifted' },
    { before: 'l0', after: 'off', opened: ['allocate', 'cloud', 'release', 'sync'], event: 'Normal DegradationLifted' },
    { before: 'l1', after: 'l1', opened: [] },
  ];
  for (const row of rows) {
    void it(`${row.before} → ${row.after}: opens [${row.opened.join(', ')}], ${row.event ?? 'no Event'}`, () => {
      assert.deepEqual(openedGates(row.before, row.after), row.opened);
      const notice = degradationNotice({ level: row.after, told: row.before });
      assert.equal(notice === undefined ? undefined : `${notice.reason.type} ${notice.reason.reason}`, row.event);
      if (notice !== undefined) assert.match(notice.message, new RegExp(row.after === 'off' ? row.before : row.after));
    });
  }

  void it('a node never told of a degradation owes no Event at off', () => {
    assert.equal(degradationNotice({ level: 'off', told: undefined }), undefined);
  });
});

void describe('degradation settings from signals and words for people', () => {
  const payloads: { value: unknown; ok: boolean }[] = [
    { value: { level: 'l0', revision: '3' }, ok: true },
    { value: { level: 'off', revision: '' }, ok: true },
    { value: { level: 'l2', revision: '3' }, ok: false },
    { value: { level: 'l1' }, ok: false },
    { value: { level: 'l1', revision: 3 }, ok: false },
    { value: 'l1', ok: false },
    { value: null, ok: false },
  ];
  for (const row of payloads) {
    void it(`${JSON.stringify(row.value)} is ${row.ok ? '' : 'not '}a setting`, () => {
      assert.equal(isDegradationSetting(row.value), row.ok);
    });
  }

  void it('each level says what it holds back', () => {
    assert.match(degradationSummary('off'), /every cloud call/);
    assert.match(degradationSummary('l1'), /no releasing cloud call/);
    assert.match(degradationSummary('l0'), /no cloud call at all/);
  });
});

void describe('what a level holds back of what a pass wanted', () => {
  const rows: { level: DegradationLevel; sync: boolean; allocate: boolean; release: boolean; held: string[] }[] = [
    // A node with nothing to do is held back by no level: no Event, no wake-up when lifted.
    { level: 'l0', sync: false, allocate: false, release: false, held: [] },
    { level: 'l1', sync: false, allocate: true, release: false, held: [] },
    { level: 'l1', sync: true, allocate: true, release: true, held: ['release', 'sync'] },
    { level: 'l0', sync: false, allocate: true, release: false, held: ['allocate'] },
    { level: 'l0', sync: true, allocate: true, release: true, held: ['allocate', 'release', 'sync'] },
    { level: 'off', sync: true, allocate: true, release: true, held: [] },
  ];
  for (const row of rows) {
    const { level, held, ...wants } = row;
    void it(`${level} with ${JSON.stringify(wants)} holds back [${held.join(', ')}]`, () => {
      assert.deepEqual(heldBackWork(level, wants), held);
    });
  }

  void it('the Event names what the pass held back', () => {
    const notice = degradationNotice({ level: 'l1', told: 'off', heldBack: ['release'] });
    assert.match(notice?.message ?? '', /held back now: release/);
  });
});
