import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { NodeCrValidations } from '../../../src/activities/kube/cr-validations.js';
import { validateNodeCr } from '../../../src/ipam/index.js';

function cr(name: string, uid: string, resourceVersion: string | undefined, adapters = 3): Record<string, unknown> {
  return {
    apiVersion: 'network.alibabacloud.com/v1beta1',
    kind: 'Node',
    metadata: { name, uid, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: { nodeCap: { adapters } },
  };
}

void describe('NodeCrValidations', () => {
  void it('validates as validateNodeCr does', () => {
    const validations = new NodeCrValidations();
    const raw = cr('n1', 'u1', '5');
    assert.deepEqual(validations.validate(raw), validateNodeCr(raw));
  });

  const cases: { name: string; first: Record<string, unknown>; second: Record<string, unknown>; shared: boolean }[] = [
    {
      name: 'the same version read twice is validated once',
      first: cr('n1', 'u1', '5'),
      second: cr('n1', 'u1', '5'),
      shared: true,
    },
    {
      name: 'a new resourceVersion is validated afresh',
      first: cr('n1', 'u1', '5'),
      second: cr('n1', 'u1', '6', 4),
      shared: false,
    },
    {
      name: 'a new object of the same name (new uid) is validated afresh',
      first: cr('n1', 'u1', '5'),
      second: cr('n1', 'u2', '5', 4),
      shared: false,
    },
    {
      name: 'without a resourceVersion nothing is kept',
      first: cr('n1', 'u1', undefined),
      second: cr('n1', 'u1', undefined),
      shared: false,
    },
  ];
  for (const c of cases) {
    void it(c.name, () => {
      const validations = new NodeCrValidations();
      const first = validations.validate(c.first);
      const second = validations.validate(c.second);
      assert.equal(first === second, c.shared);
      assert.deepEqual(second, validateNodeCr(c.second));
    });
  }

  void it('keeps at most its bound of nodes, dropping the one validated longest ago', () => {
    const validations = new NodeCrValidations(2);
    const a = validations.validate(cr('a', 'u', '1'));
    const b = validations.validate(cr('b', 'u', '1'));
    validations.validate(cr('c', 'u', '1'));
    assert.equal(validations.validate(cr('b', 'u', '1')), b);
    assert.notEqual(validations.validate(cr('a', 'u', '1')), a);
  });
});
