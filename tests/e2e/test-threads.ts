/**
 * EMBEDDED_THREADS of the embedded servers the e2e and security suites start: the environment's,
 * else `none` (the default). `EMBEDDED_THREADS=auto npx vitest run tests/e2e` runs every suite with
 * orchestrator threads. Expectations that depend on the thread count (one replica of each service
 * per thread in a reload answer) read it from the server (`orchestratorThreadIds`); the telemetry
 * and observability suites run with two threads whatever this says.
 */
export const EMBEDDED_TEST_THREADS = process.env.EMBEDDED_THREADS || 'none';
