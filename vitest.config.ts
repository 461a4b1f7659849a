import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their TypeScript sources through the
// `@agentloop/source` export condition (no build needed to test).
const conditions = ['@agentloop/source', 'import', 'node', 'default'];

/** The attack suite measures the attacked server's /ok latency (issue 18): it runs alone, after everything else. */
const SECURITY = 'tests/security/**/*.test.ts';
/** The sandbox escape tests fork-bomb and flood memory (capped by cgroups, issue 15): alone too, never beside other files. */
const SANDBOX_ESCAPE = 'libs/sandbox/src/escape.test.ts';

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          // In-process tests of one package each. One module graph per worker for all of them
          // (isolate: false): a fresh graph per file cost more than the tests themselves (vitest's
          // "import" time); each file still sets up and tears down its own servers, files and timers.
          name: 'unit',
          include: ['libs/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'],
          exclude: [SANDBOX_ESCAPE, '**/node_modules/**'],
          isolate: false,
          fileParallelism: true,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          // Whole services as processes (tests/e2e), deployment files, replays.
          name: 'e2e',
          include: ['tests/**/*.test.ts'],
          exclude: [SECURITY, '**/node_modules/**'],
          fileParallelism: true,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'security',
          include: [SECURITY, SANDBOX_ESCAPE],
          // One attacked server at a time, with nothing else competing for the 2 cores.
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
