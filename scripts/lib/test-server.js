/** The contract every server of the test environment implements (see test-servers.ts for the list). */
export {};
