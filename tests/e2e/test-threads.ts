/**
 * EMBEDDED_THREADS of the embedded servers the e2e and security suites start: the environment's,
 * else `none` (the default). `EMBEDDED_THREADS=auto npx vitest run tests/e2e` runs every suite with
 * orchestrator threads; a few expectations are one thread's (one MCP broker replica, a test
 * logger that sees every line, RUN_CONCURRENCY=1), others show what threads do not do yet (README,
 * `EMBEDDED_THREADS`).
 */
export const EMBEDDED_TEST_THREADS = process.env.EMBEDDED_THREADS || 'none';
