import { describe, expect, it } from 'vitest';
import { formatRunTimes, runRates } from '../../../src/cli/run-summary.js';

describe('runRates', () => {
  it('divides the records by the steady-state time only, start-up counted apart', () => {
    // 0.5 s to load the module, 2 s deploy → running, 1 s running: 1,000,000 records in 1 s.
    const r = runRates({
      wallMs: 3600,
      loadMs: 500,
      jobMs: 3000,
      deployToRunningMs: 2000,
      sourceRecords: 1_000_000,
    });
    expect(r.startupMs).toBe(2500);
    expect(r.steadyMs).toBe(1000);
    expect(r.steadyRecordsPerSec).toBe(1_000_000);
  });

  it('has no rate when the steady phase is under a millisecond', () => {
    const r = runRates({ wallMs: 10, loadMs: 1, jobMs: 5, deployToRunningMs: 5, sourceRecords: 10 });
    expect(r.steadyMs).toBe(0);
    expect(r.steadyRecordsPerSec).toBeUndefined();
    expect(
      formatRunTimes({ wallMs: 10, loadMs: 1, jobMs: 5, deployToRunningMs: 5, sourceRecords: 10 }),
    ).toContain('too short to rate');
  });

  it('counts everything as steady state (a lower bound) when the start-up was never observed', () => {
    const t = { wallMs: 4000, loadMs: 400, jobMs: 3000, deployToRunningMs: undefined, sourceRecords: 3000 };
    expect(runRates(t)).toEqual({ startupMs: 400, steadyMs: 3000, steadyRecordsPerSec: 1000 });
    expect(formatRunTimes(t)).toContain('start-up unknown');
  });

  it('prints start-up and steady-state apart', () => {
    expect(
      formatRunTimes({
        wallMs: 3600,
        loadMs: 500,
        jobMs: 3000,
        deployToRunningMs: 2000,
        sourceRecords: 1_000_000,
      }),
    ).toBe(
      'finished in 3.60 s: start-up 2.50 s, then 1.00 s steady at 1,000,000 records/s (1,000,000 source records)',
    );
  });
});
