import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { applyJsonDelta, canonicalJson, deltaFitsBase, jsonDelta } from '../../../src/ipam/index.js';
import type { JsonChange } from '../../../src/ipam/index.js';

void describe('jsonDelta', () => {
  const rows: { name: string; before: unknown; after: unknown; maxDepth?: number; expected: JsonChange[] }[] = [
    { name: 'equal documents: no change', before: { a: { b: [1] } }, after: { a: { b: [1] } }, expected: [] },
    {
      name: 'a key added',
      before: { a: 1 },
      after: { a: 1, b: { c: 2 } },
      expected: [{ path: ['b'], value: { c: 2 } }],
    },
    { name: 'a key removed', before: { a: 1, b: 2 }, after: { a: 1 }, expected: [{ path: ['b'], remove: true }] },
    {
      name: 'a deep leaf changed: only its path',
      before: { p: { 'ns/a': { s: { phase: 'Pending' } } } },
      after: { p: { 'ns/a': { s: { phase: 'Running' } } } },
      expected: [{ path: ['p', 'ns/a', 's', 'phase'], value: 'Running' }],
    },
    {
      name: 'arrays replaced whole',
      before: { a: [1, 2] },
      after: { a: [1, 3] },
      expected: [{ path: ['a'], value: [1, 3] }],
    },
    {
      name: 'below maxDepth, objects replaced whole',
      before: { e: { ip: { pod: 'x', status: 'Valid' } } },
      after: { e: { ip: { pod: 'y', status: 'Valid' } } },
      maxDepth: 2,
      expected: [{ path: ['e', 'ip'], value: { pod: 'y', status: 'Valid' } }],
    },
    { name: 'a scalar root', before: 1, after: 2, expected: [{ path: [], value: 2 }] },
    { name: 'undefined members count as absent', before: { a: undefined }, after: {}, expected: [] },
  ];
  for (const row of rows) {
    void it(row.name, () => {
      const changes = jsonDelta(row.before, row.after, row.maxDepth === undefined ? {} : { maxDepth: row.maxDepth });
      assert.deepEqual(changes, row.expected);
      assert.equal(canonicalJson(applyJsonDelta(row.before, changes)), canonicalJson(row.after));
    });
  }

  void it('applies without touching the base', () => {
    const base = { a: { b: 1, c: { d: 2 } } };
    const copy = structuredClone(base);
    const next = applyJsonDelta(base, [
      { path: ['a', 'c', 'd'], value: 3 },
      { path: ['a', 'b'], remove: true },
    ]);
    assert.deepEqual(base, copy);
    assert.deepEqual(next, { a: { c: { d: 3 } } });
  });

  void it('tells whether every change has its parent in the base', () => {
    assert.equal(deltaFitsBase({ e1: { ipv4: {} } }, [{ path: ['e1', 'ipv4', '10.0.0.1'], value: {} }]), true);
    assert.equal(deltaFitsBase({ e1: {} }, [{ path: ['e2', 'ipv4', '10.0.0.1'], value: {} }]), false);
    assert.equal(deltaFitsBase({}, [{ path: ['e2'], value: {} }]), true);
  });

  void it('round-trips random documents', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const doc = (depth: number): unknown => {
      if (depth === 0 || random() < 0.3) return random() < 0.5 ? Math.floor(random() * 3) : [Math.floor(random() * 2)];
      const out: Record<string, unknown> = {};
      for (const key of ['a', 'b', 'c', 'd']) if (random() < 0.6) out[key] = doc(depth - 1);
      return out;
    };
    for (let i = 0; i < 300; i += 1) {
      const before = doc(4);
      const after = doc(4);
      assert.equal(canonicalJson(applyJsonDelta(before, jsonDelta(before, after))), canonicalJson(after));
    }
  });
});
