import { defineConfig } from 'vitest/config';

// Tests run against src/ for unit tests; anything that starts worker threads imports dist/
// (built by `npm test` before vitest runs), because worker threads cannot load .ts directly.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous: e2e tests run real jobs, and at a load of 20-30 on 2 cores (another suite beside
    // this one) several connector tests took over 60 s. A test that hangs still fails, later.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
  },
});
