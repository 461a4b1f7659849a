/**
 * EMBEDDED_THREADS of the embedded servers the e2e and security suites start: the environment's,
 * else `none`. Not the product's default (`auto`, orchestrator threads): each thread adds ~1.5 s of module
 * loading to every server start of the suites, and one thread running everything keeps a failure's
 * log in one place; tests/e2e/embedded-threads.test.ts runs the threaded mode
 * itself, and `EMBEDDED_THREADS=auto npx vitest run tests/e2e` runs every suite with threads. Expectations that depend on the thread count (one replica of each service
 * per thread in a reload answer) read it from the server (`orchestratorThreadIds`); the telemetry
 * and observability suites run with two threads whatever this says.
 */
export const EMBEDDED_TEST_THREADS = process.env.EMBEDDED_THREADS || 'none';
