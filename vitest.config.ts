import { defineConfig } from 'vitest/config';

// Tests run against src/ for unit tests; anything that starts worker threads imports dist/
// (built by `npm test` before vitest runs), because worker threads cannot load .ts directly.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
