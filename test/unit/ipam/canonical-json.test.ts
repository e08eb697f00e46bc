import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalJson } from '../../../src/ipam/eni-records.js';

void describe('canonicalJson', () => {
  const rows: { name: string; value: unknown; expected: string }[] = [
    {
      name: 'keys sorted at every depth',
      value: { b: [{ d: 1, c: 2 }], a: null },
      expected: '{"a":null,"b":[{"c":2,"d":1}]}',
    },
    { name: 'undefined members dropped', value: { b: undefined, a: 1 }, expected: '{"a":1}' },
    { name: 'undefined array items as null', value: [undefined, 1], expected: '[null,1]' },
    { name: 'undefined itself as null', value: undefined, expected: 'null' },
    { name: 'strings escaped as JSON', value: { 'k"': 'v\n' }, expected: '{"k\\"":"v\\n"}' },
    { name: 'non-finite numbers as null', value: [Number.NaN, 1.5], expected: '[null,1.5]' },
  ];
  for (const row of rows) {
    void it(`writes ${row.name}`, () => {
      assert.equal(canonicalJson(row.value), row.expected);
    });
  }

  void it('is the same for equal values whatever their key order', () => {
    assert.equal(canonicalJson({ x: { p: 1, q: [2] }, y: 'z' }), canonicalJson({ y: 'z', x: { q: [2], p: 1 } }));
  });

  void it('throws on a cycle, as JSON.stringify does', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.throws(() => canonicalJson(cyclic), TypeError);
  });
});
