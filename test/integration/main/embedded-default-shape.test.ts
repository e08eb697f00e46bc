/**
 * src/main.ts loads scripts/lib/embedded-default.ts through a specifier tsc does not follow (so the build leaves
 * scripts/ out of dist/) and declares the shape it uses: the typecheck of this file fails when the two drift apart.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';

import * as embeddedDefault from '../../../scripts/lib/embedded-default.js';
import type { EmbeddedDefaultModule } from '../../../src/start-roles.js';

it('the embedded default module has the shape src/main.ts declares for it', () => {
  const module: EmbeddedDefaultModule = embeddedDefault;
  assert.equal(typeof module.runEmbeddedDefault, 'function');
});
