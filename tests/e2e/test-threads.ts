/**
 * EMBEDDED_THREADS of the embedded servers the tests start: `none` unless the environment sets it
 * (`EMBEDDED_THREADS=auto npm test` runs them with the default). The default (`auto`) starts an
 * orchestrator thread per core, each loading the module graph again (~1.4 s), a cost every suite
 * would pay; the threaded modes have their own suites (embedded-threads, embedded-restart), and a
 * suite's expectations (one MCP broker replica, RUN_CONCURRENCY=1) are those of one thread.
 */
export const EMBEDDED_TEST_THREADS = process.env.EMBEDDED_THREADS || 'none';
