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
          name: 'main',
          include: ['libs/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
          exclude: [SECURITY, SANDBOX_ESCAPE, '**/node_modules/**'],
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
