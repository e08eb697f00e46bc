/**
 * The environment variables through which the test servers' addresses reach the tests: set by
 * `scripts/with-testenv.ts` (and printed by `npm run testenv`), read by test/support/.
 */
export const TEST_ENV_VARS = {
  /** `host:port` of the Temporal frontend (gRPC). */
  temporalAddress: 'ENIFLOW_TEST_TEMPORAL_ADDRESS',
  temporalNamespace: 'ENIFLOW_TEST_TEMPORAL_NAMESPACE',
  /**
   * Which Temporal server the tests run on: `dev` (the CLI's dev server, SQLite; the default) or `postgres` (the
   * compose file's server on PostgreSQL). Set it to choose; the test environment sets it to what it started.
   */
  temporalKind: 'ENIFLOW_TEST_TEMPORAL',
  /** Web UI of the Temporal dev server, for looking at a test's workflows by hand. */
  temporalUiUrl: 'ENIFLOW_TEST_TEMPORAL_UI_URL',
  /** `https://127.0.0.1:<port>` of the test kube-apiserver. */
  kubeServer: 'ENIFLOW_TEST_KUBE_SERVER',
  /** PEM file of the CA that signed the kube-apiserver's serving certificate. */
  kubeCaFile: 'ENIFLOW_TEST_KUBE_CA_FILE',
  /** Bearer token of a system:masters user. */
  kubeToken: 'ENIFLOW_TEST_KUBE_TOKEN',
  /** A kubeconfig with the three values above, e.g. for `KUBECONFIG=$ENIFLOW_TEST_KUBECONFIG kubectl get nodes`. */
  kubeconfig: 'ENIFLOW_TEST_KUBECONFIG',
} as const;

/**
 * The directory into which tests write the logs of what they run in-process (test/support/test-logs.ts): set by
 * `scripts/with-testenv.ts` inside its run directory, which it keeps and names when the tests fail.
 */
export const TEST_LOG_DIR_VAR = 'ENIFLOW_TEST_LOG_DIR';

export type TestEnvVarName = (typeof TEST_ENV_VARS)[keyof typeof TEST_ENV_VARS];

/** Reads a variable the test harness must have set, with a message that says how to set it. */
export function requireTestEnvVar(name: TestEnvVarName, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(
      `${name} is not set. Run the tests through \`tsx scripts/with-testenv.ts <command>\` (as \`npm run ` +
        `test:integration\` does), or start \`npm run testenv\` and \`eval "$(npm run -s testenv -- --exports)"\`.`,
    );
  }
  return value;
}
