/** The contract every server of the test environment implements (see test-servers.ts for the list). */

/** A server that is up and answering. */
export interface RunningTestServer {
  readonly name: string;
  /** Variables that tell tests how to reach it (names from test-env-vars.ts). */
  readonly env: Readonly<Record<string, string>>;
  /** Addresses, pid, ports and log path, printed as JSON by `npm run testenv`. */
  readonly details: TestServerDetails;
  /** Stops it and everything it spawned; resolves once the processes are gone. */
  stop(): Promise<void>;
  /** Settles when its process has exited, after stop() or on its own; the text says how it exited. */
  readonly exited: Promise<string>;
}

export interface TestServerDetails {
  /** Process id of the server (its process group has the same id). */
  readonly pid: number;
  /** Every TCP port it listens on, on 127.0.0.1. */
  readonly ports: readonly number[];
  readonly logPath: string;
  readonly [detail: string]: unknown;
}

export interface TestServerStartContext {
  /** A private directory for this start (state, logs); removed after a clean stop. */
  readonly runDir: string;
  readonly log: (line: string) => void;
}

/** How to start one kind of test server. */
export interface TestServerDefinition {
  readonly name: string;
  /**
   * Variables that, when all are set in the caller's environment, mean the server already runs (e.g. a
   * developer's `npm run testenv`) and is reused instead of started.
   */
  readonly envVarNames: readonly string[];
  start(context: TestServerStartContext): Promise<RunningTestServer>;
}
