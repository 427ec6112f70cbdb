/**
 * Failure attribution: when user code throws in one subtask after a keyBy, its upstream producers
 * fail with ChannelClosedError (the failed consumer closed its gate) and, with checkpointing, the
 * coordinator may give up on a checkpoint the failed task will never acknowledge. Whichever of
 * these reaches the scheduler first, the job's error must be the user's exception, naming its
 * operator and subtask, with the user's error (name, message, stack) as `cause`, and the
 * consequential failures attached as `suppressed`. Before the fix, about half of these runs
 * reported a ChannelClosedError or "checkpoint coordinator failed" instead.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobFailedError, runJob, TaskFailureError } from '../../dist/index.js';
import { fixture } from './helpers.js';

const RUNS = 10;

describe('failure attribution', () => {
  it(`names the user's exception as the root cause in ${RUNS} runs at parallelism 3`, async () => {
    for (let i = 0; i < RUNS; i++) {
      const at = 1000 + i * 997;
      const error = await runJob(fixture('failing-downstream.mjs'), {
        parallelism: 3,
        stateBackend: i % 4 < 2 ? 'lmdb' : 'heap',
        checkpointing: i % 2 === 0 ? { interval: 10, tolerableFailures: 0 } : undefined,
        args: { at: String(at) },
      }).catch((e: unknown) => e);
      const context = `run ${i}: ${String(error)}`;
      expect(error, context).toBeInstanceOf(JobFailedError);
      const failure = (error as JobFailedError).cause as TaskFailureError;
      expect(failure, context).toBeInstanceOf(TaskFailureError);
      expect(failure.operator, context).toBe('thrower');
      expect(failure.task, context).toMatch(/^thrower -> sink: out \(\d\/3\)$/);
      const user = failure.cause as Error;
      expect(user.name, context).toBe('RangeError');
      expect(user.message, context).toBe(`user boom at ${at}`);
      expect(user.stack, context).toMatch(/failing-downstream\.mjs/);
      for (const s of failure.suppressed) expect(s.message).not.toMatch(/user boom/);
    }
  });

  it(`a committing sink's rejected pre-commit is the root cause, not the declined checkpoint (tolerableFailures: 0), in ${RUNS} runs`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'weir-attribution-'));
    try {
      for (let i = 0; i < RUNS; i++) {
        const error = await runJob(fixture('slow-commit-sink.mjs'), {
          parallelism: 2,
          checkpointing: { interval: 10, tolerableFailures: 0 },
          restartStrategy: { type: 'none' },
          args: {
            n: '1000000',
            rate: '20000',
            commitDelay: '0',
            failPreCommitAt: '2',
            out: path.join(dir, String(i)),
          },
        }).catch((e: unknown) => e);
        const context = `run ${i}: ${String(error)}`;
        expect(error, context).toBeInstanceOf(JobFailedError);
        const failure = (error as JobFailedError).cause as TaskFailureError;
        expect(failure, context).toBeInstanceOf(TaskFailureError);
        expect(failure.operator, context).toBe('slow sink');
        expect((failure.cause as Error).message, context).toBe('injected pre-commit failure at checkpoint 2');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
