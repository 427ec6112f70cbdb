import { defineConfig } from 'vitest/config';

// Tests run against src/ for unit tests; anything that starts worker threads imports dist/
// (built by `npm test` before vitest runs), because worker threads cannot load .ts directly.
//
// Two projects, because the two kinds of test pay for isolation differently:
// - `unit` (test/unit, test/architecture): pure functions and in-process harnesses over src/.
//   Most files run in well under a second, so a fresh child process per file (spawn node, load
//   vitest, transform and import src/ again) cost more than the tests: 29 unit files took 72-74 s
//   isolated and 23-24 s with `isolate: false` (one run each way, interleaved, load ~30). These
//   files share no module-level state (STYLE.md rule 5: src/ has none; the tests keep theirs in
//   `describe` scope and clean up in `afterEach`), so they share a child process.
// - `e2e` (test/e2e): real jobs in real worker threads, some counting the process's OS threads,
//   one setting TMPDIR: each file keeps a fresh process of its own.
export default defineConfig({
  test: {
    // Generous: e2e tests run real jobs, and at a load of 20-30 on 2 cores (another suite beside
    // this one) several connector tests took over 60 s. A test that hangs still fails, later.
    testTimeout: 180_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/architecture/**/*.test.ts'],
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
        },
      },
    ],
  },
});
