import { availableParallelism } from 'node:os';
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
//
// How many files run at once. Vitest's default is availableParallelism() - 1: one file at a time
// on a 2-core machine, which left the suite at ~15-19 min (1 014 s on Node 20 in CI), although an
// e2e file mostly waits (rate-limited sources, services, child processes, worker threads handing
// records over): e2e forks used 366 s of CPU in an 1 156 s run. Files are independent: every
// service object (table, stream, bucket, key) has a pid- and time-stamped name, every port is 0,
// every directory comes from mkdtemp, and what a file counts (OS threads, open files, timers) or
// sets (TMPDIR) is its own process's. So one file per core runs: the e2e project took 715 s
// instead of 1 156 s, all passing (2026-12-02 10:23 and 11:03 UTC, load 15-28 from other sessions).
// Not more: with four at once (load 28-40) six timing-sensitive tests failed (file-connectors p=1
// restarts 0, savepoint-commits, savepoint-restore-commits 'sources-finished', stuck-task's 1 s
// checkpoint timeout, verify-services/verify-sigkill 'pass' instead of 'fail'). WEIR_TEST_WORKERS
// overrides it (1: one file at a time). Vitest runs the e2e files first (longest first once it has
// timings) and the unit files last, which then share their forks as before (isolate: false).
const workers = Number(process.env.WEIR_TEST_WORKERS ?? Math.max(1, availableParallelism()));
if (!Number.isInteger(workers) || workers < 1)
  throw new RangeError(
    `WEIR_TEST_WORKERS must be a whole number >= 1, got "${process.env.WEIR_TEST_WORKERS}"`,
  );

export default defineConfig({
  test: {
    maxWorkers: workers,
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
