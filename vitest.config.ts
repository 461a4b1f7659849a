import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their TypeScript sources through the
// `@agentloop/source` export condition (no build needed to test).
export default defineConfig({
  resolve: { conditions: ['@agentloop/source', 'import', 'node', 'default'] },
  ssr: { resolve: { conditions: ['@agentloop/source', 'import', 'node', 'default'] } },
  test: {
    include: ['libs/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
