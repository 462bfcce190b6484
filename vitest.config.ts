import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules', 'dist', 'bench'],
    testTimeout: 30_000,
    pool: 'forks',
  },
});
