/**
 * A user function that returns a Promise (an `async` function) fails the job at once, for every
 * kind of user function: a fatal AsyncUserFunctionError naming the operator and `mapAsync`, no
 * restart although the restart strategy would allow three, and never a silent success.
 * Real jobs in real worker threads (test/fixtures/jobs/async-functions.mjs, one case per kind).
 */
import { describe, expect, it } from 'vitest';
import { JobFailedError, runJob, startJob, TaskFailureError } from '../../dist/index.js';
import { fixture } from './helpers.js';

const job = fixture('async-functions.mjs');
const { kinds } = (await import(job)) as { kinds: string[] };

/** The function kind the error names, per case of the fixture. */
const functionKind: Record<string, string> = {
  map: 'map function',
  filter: 'filter function',
  flatMap: 'flatMap function',
  process: 'process function',
  keyedProcess: 'keyed process function',
  onTimer: 'onTimer function',
  keySelector: 'key selector',
  reduce: 'reduce function',
  reducingState: 'reduce function of reducing state "total"',
  windowReduce: 'window reduce function',
  aggregateCreateAccumulator: 'aggregate function createAccumulator',
  aggregateAdd: 'aggregate function add',
  aggregateGetResult: 'aggregate function getResult',
  aggregateMerge: 'aggregate function merge',
  windowProcess: 'window process function',
  windowJoin: 'window join function',
  intervalJoin: 'interval join function',
  coProcess: 'processElement1',
  timestampExtractor: 'timestamp function',
};

describe('async user functions', () => {
  it('the table covers every case of the fixture', () => {
    expect(Object.keys(functionKind).sort()).toEqual([...kinds].sort());
  });

  it.each(kinds)('an async %s function fails the job once, fatally, naming the operator', async (kind) => {
    const client = await startJob(job, {
      args: { kind },
      restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 },
    });
    let restarting = 0;
    client.on('restarting', () => restarting++);
    const error = await client.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobFailedError);
    const failed = error as JobFailedError;
    expect(failed.reason).toBe('fatal-error');
    expect(failed.restarts).toBe(0);
    expect(restarting).toBe(0);
    const cause = failed.cause as TaskFailureError;
    expect(cause).toBeInstanceOf(TaskFailureError);
    expect(cause.failureKind).toBe('fatal');
    expect(cause.originalName).toBe('AsyncUserFunctionError');
    expect(cause.originalCode).toBe('ERR_WEIR_ASYNC_USER_FUNCTION');
    expect(cause.operator).toBe('culprit');
    expect(cause.originalMessage).toContain(`${functionKind[kind]} `);
    expect(cause.originalMessage).toContain('stream.mapAsync(fn, { capacity, timeoutMs, ordered })');
    expect(failed.message).toMatch(/fatal error \(not restarted/);
  });

  it('runJob rejects the same way (no exit-0 success with lost output)', async () => {
    await expect(
      runJob(job, {
        args: { kind: 'keyedProcess' },
        restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
      }),
    ).rejects.toMatchObject({ name: 'JobFailedError', restarts: 0, reason: 'fatal-error' });
  });
});

describe('failover', () => {
  it('a restartable failure (a plain throw) still uses every restart attempt: only fatal ends at once', async () => {
    const client = await startJob(fixture('failing.mjs'), {
      args: { failure: 'throw', at: '5', n: '20' },
      restartStrategy: { type: 'fixed-delay', attempts: 2, delay: 0 },
    });
    let restarting = 0;
    client.on('restarting', () => restarting++);
    const error = await client.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toMatchObject({ reason: 'restarts-exhausted', restarts: 2 });
    expect((error as JobFailedError).cause).toMatchObject({
      failureKind: 'task',
      originalName: 'RangeError',
    });
    expect(restarting).toBe(2);
  });
});
