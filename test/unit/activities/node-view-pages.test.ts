/**
 * A node's view sent in full comes in pages of at most `VIEW_PODS_PER_PAGE` pods, so no read's answer (a marker in
 * the workflow's history) nears Temporal's 2 MB payload limit: the pages hold every pod once, in key order, the
 * first the rest of the view, and `more` / `after` chain them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { fullViewPage, VIEW_PODS_PER_PAGE } from '../../../src/activities/kube/node-view.js';
import type { NodeView } from '../../../src/activities/kube/node-view.js';

function viewWith(count: number): NodeView {
  const pods: NodeView['pods'] = {};
  for (let i = count - 1; i >= 0; i--) {
    const name = `p${String(i).padStart(5, '0')}`;
    pods[`default/${name}`] = { metadata: { namespace: 'default', name }, spec: {} };
  }
  return { nodeName: 'n', pods, coreNode: { uid: 'u', isReady: true, exclusiveEniMode: 'default' } };
}

void describe('fullViewPage', () => {
  void it('sends a small view in one page, with no more to ask for', () => {
    const view = viewWith(3);
    assert.deepEqual(fullViewPage({ view, digest: 'd' }), { digest: 'd', full: view });
  });

  void it('chains pages that hold every pod once, in key order, the first with the rest of the view', () => {
    const view = viewWith(7);
    const pages = [fullViewPage({ view, digest: 'd', perPage: 3 })];
    for (let last = pages[0]; last?.more !== undefined; last = pages.at(-1)) {
      pages.push(fullViewPage({ view, digest: 'd', after: last.more, perPage: 3 }));
    }
    assert.deepEqual(
      pages.map((page) => Object.keys(page.full.pods)),
      [
        ['default/p00000', 'default/p00001', 'default/p00002'],
        ['default/p00003', 'default/p00004', 'default/p00005'],
        ['default/p00006'],
      ],
    );
    assert.deepEqual(pages[0]?.full.coreNode, view.coreNode);
    assert.equal(pages[1]?.full.coreNode, undefined, 'later pages carry pods only');
    assert.deepEqual(
      pages.map((page) => [page.after, page.more]),
      [
        [undefined, 'default/p00002'],
        ['default/p00002', 'default/p00005'],
        ['default/p00005', undefined],
      ],
    );
  });

  void it(`10,000 pods: pages of ${VIEW_PODS_PER_PAGE}, each far below 2 MB`, () => {
    const view = viewWith(10_000);
    let page = fullViewPage({ view, digest: 'd' });
    const sizes = [JSON.stringify(page).length];
    while (page.more !== undefined) {
      page = fullViewPage({ view, digest: 'd', after: page.more });
      sizes.push(JSON.stringify(page).length);
    }
    assert.equal(sizes.length, Math.ceil(10_000 / VIEW_PODS_PER_PAGE));
    assert.ok(Math.max(...sizes) < 512 * 1024, `largest page ${Math.max(...sizes)} bytes`);
  });
});
