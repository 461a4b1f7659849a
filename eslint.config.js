// Flat config: typescript-eslint's recommended rules over every package.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'libs/proto/src/gen/**', '.tmp/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-console': 'error',
    },
  },
  {
    // Tests, benchmarks, CLIs and skill scripts (stdout is their interface) may print.
    files: ['**/*.test.ts', 'tests/**', 'bench/**', 'scripts/**', 'apps/**', 'skills/**'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // The ops console (issue 16): browser modules served as they are.
    files: ['services/gateway/console/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'addEventListener',
          'sessionStorage',
          'fetch',
          'AbortController',
          'TextDecoderStream',
          'URLSearchParams',
          'setTimeout',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
);
