// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const IO_MODULES = ['node:*', '@temporalio/*', '@alicloud/*', '@darabonba/*', '@kubernetes/*', 'pino'];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', '.tmp/', 'eslint.config.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's describe/it return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after'] },
          ],
        },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': [
        'error',
        { prefer: 'type-imports', fixStyle: 'separate-type-imports' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'max-params': ['error', 3],
      'no-console': 'error',
      // The CR keeps ENIs and IPs in records keyed by id and address; deleting a key is how an entry leaves it.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // client-node's models are data-only classes; object literals are how its docs build them.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
    },
  },
  {
    // A cycle makes module load order decide what is initialised; the TypeScript resolver maps `./x.js` to x.ts.
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Without these the plugin parses only .js files and so never follows an import into a .ts module.
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['src/ipam/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...IO_MODULES, '../*'],
              message: 'ipam/ is pure: pass data in, return data out (no I/O, Temporal, cloud or Kubernetes imports).',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'process', 'console', 'fetch'],
      // Date is allowed for calendar arithmetic on given epoch values (rfc3339.ts); reading the clock is not.
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random' },
        { object: 'Date', property: 'now', message: 'ipam/ is pure: take the time as an input.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'ipam/ is pure: `new Date()` reads the clock; take the time as an input.',
        },
        {
          selector: "CallExpression[callee.name='Date']",
          message: 'ipam/ is pure: `Date()` reads the clock; take the time as an input.',
        },
      ],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../activities/*', '../activities/**', '../../activities/*', '../../activities/**'],
              allowTypeImports: true,
              message: 'Workflows see activities as types only: use import type.',
            },
            {
              group: [
                'node:*',
                '@temporalio/activity',
                '@temporalio/client',
                '@temporalio/worker',
                '@temporalio/testing',
                '@alicloud/*',
                '@darabonba/*',
                '@kubernetes/*',
                'pino',
                '../watcher/*',
                '../worker/*',
                '../kube/*',
                '../config.js',
                '../logger.js',
                '../../watcher/*',
                '../../worker/*',
                '../../kube/*',
                '../../config.js',
                '../../logger.js',
              ],
              // ../shared/* and ../../shared/* stay open: workflow ids and search attributes live there.
              message: 'Workflow code runs in the Temporal sandbox: no I/O, no Node built-ins.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/activities/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '../workflows/*',
                '../../workflows/*',
                '../watcher/*',
                '../../watcher/*',
                '@temporalio/workflow',
                '@temporalio/client',
              ],
              message: 'Activities own I/O; they never orchestrate (workflow names and ids are in ../shared/).',
            },
          ],
        },
      ],
    },
  },
  {
    // Kubernetes machinery shared by the watcher and the worker's read cache: it knows neither.
    files: ['src/kube/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../activities/*', '../workflows/*', '../watcher/*', '../worker/*', '@temporalio/*'],
              message: 'src/kube/ is generic Kubernetes machinery shared by the watcher and the worker.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/watcher/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['../activities/*', '@alicloud/*', '@darabonba/*', '@temporalio/worker', '@temporalio/activity'],
              message: 'The watcher only talks to Kubernetes and the Temporal client.',
            },
            {
              group: ['../workflows/*', '!../workflows/messages.js'],
              allowTypeImports: true,
              message: 'The watcher sees workflows through messages.ts, ../shared/ and types only.',
            },
          ],
        },
      ],
    },
  },
  {
    // Names shared by the worker, the workflows, the watcher and the CLI: every one of them may import it, so it
    // imports none of them (nor any I/O) and stays loadable inside the workflow sandbox.
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./|@temporalio/common$)',
              message: 'src/shared/ is neutral ground: it may import only @temporalio/common and its own files.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/ecs-emulator/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '../ipam/*',
                '../workflows/*',
                '../activities/*',
                '../watcher/*',
                '../worker/*',
                '../shared/*',
                '../../ipam/*',
              ],
              message: 'The emulator stands in for the cloud: it knows nothing of eniflow.',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain JavaScript: the install's SDK patch (run by npm under whatever Node runs it) and the file it copies into
    // @temporalio/worker. Not in the TypeScript project, so without type-aware rules; Node's globals declared here.
    files: ['scripts/**/*.mjs', 'scripts/**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        SharedArrayBuffer: 'readonly',
        Atomics: 'readonly',
        BigInt64Array: 'readonly',
      },
    },
    rules: { 'no-console': 'off' },
  },
  {
    files: ['scripts/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', exports: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Tests probe optional paths of CR records freely; the rule misreads index-signature lookups there.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      'no-console': 'off',
      'max-params': 'off',
    },
  },
  prettier,
);
