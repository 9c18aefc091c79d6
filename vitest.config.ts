import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // The embedded ClickHouse engine binds one data directory per process: every test
    // file runs in a process of its own, with its own directory and databases.
    pool: 'forks',
    poolOptions: { forks: { isolate: true, maxForks: 2, minForks: 1 } },
    fileParallelism: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
