/**
 * `weir demo` when the log cannot be opened (a full disk, a read-only temporary directory): the
 * mode rejects with the log's error and leaves nothing behind that keeps the process alive or
 * fills the disk (issue 13: before, the telemetry channel opened first stayed open, so the command
 * printed the error and then hung forever, its temporary directory left in place).
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it, vi } from 'vitest';

const opened: { closed: boolean }[] = [];
vi.mock('../../../src/demo/demo-telemetry.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/demo/demo-telemetry.js')>();
  return {
    ...original,
    listenTelemetry: () => {
      const l = { closed: false };
      opened.push(l);
      return { close: () => (l.closed = true) };
    },
  };
});
const dirs: string[] = [];
vi.mock('../../../src/log/log.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../src/log/log.js')>();
  return {
    ...original,
    openLog: (dir: string) => {
      dirs.push(dir);
      throw new Error('cannot open log (test)');
    },
  };
});

// Unit files share one module registry (`isolate: false`): another file may already have loaded
// demo-run.js with the real log and telemetry; a fresh registry makes this import see the mocks.
vi.resetModules();
const { runDemoMode } = await import('../../../src/demo/demo-run.js');

afterAll(() => {
  // Leave no mocked log or telemetry module in the shared registry for the files after this one.
  vi.doUnmock('../../../src/log/log.js');
  vi.doUnmock('../../../src/demo/demo-telemetry.js');
  vi.resetModules();
});

describe('runDemoMode when the log cannot be opened', () => {
  it('rejects with the error, closes the telemetry channel and removes its directory', async () => {
    const config = {
      records: 10,
      rate: 10,
      users: 2,
      parallelism: 1,
      checkpointIntervalMs: 100,
      crashAt: 0.5,
      durability: 'fsync' as const,
      workerNice: 0,
    };
    await expect(runDemoMode('exactly-once', config, { write: () => true })).rejects.toThrow(
      'cannot open log (test)',
    );
    expect(opened).toHaveLength(1);
    expect(opened[0].closed).toBe(true);
    expect(dirs).toHaveLength(1);
    // the mode's temporary directory (the log's parent) is gone
    expect(existsSync(dirs[0].replace(/\/log$/, ''))).toBe(false);
  });
});
