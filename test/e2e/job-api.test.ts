/**
 * The job API's options and events end to end (test/fixtures/jobs/job-api.mjs): `signal`
 * cancels with an AbortError, an empty collect sink is `[]`, the `logger` gets the main
 * thread's records and the workers' (forwarded over the task event port) with their fields,
 * and events are typed.
 */
import { describe, expect, it } from 'vitest';
import {
  type DeployedEvent,
  JobAbortedError,
  type JobClient,
  type Logger,
  runJob,
  startJob,
  UnknownOptionError,
} from '../../dist/index.js';
import { fixture } from './helpers.js';

const job = fixture('job-api.mjs');

interface Captured {
  level: string;
  fields: Record<string, unknown>;
  msg: string | undefined;
}

function capturingLogger(): { logger: Logger; records: Captured[] } {
  const records: Captured[] = [];
  const method =
    (level: string) =>
    (a: object | string, msg?: string): void => {
      if (typeof a === 'string') records.push({ level, fields: {}, msg: a });
      else records.push({ level, fields: a as Record<string, unknown>, msg });
    };
  return {
    records,
    logger: { debug: method('debug'), info: method('info'), warn: method('warn'), error: method('error') },
  };
}

describe('results', () => {
  it('a collect sink that received nothing is [] in result.sinks', async () => {
    const result = await runJob(job, { args: { n: '50' }, logger: capturingLogger().logger });
    expect(result.sinks.none).toEqual([]);
    expect(result.sinks.all).toHaveLength(50);
  });
});

describe('logger', () => {
  it('gets the lifecycle from the main thread and the records of workers, with structured fields', async () => {
    const { logger, records } = capturingLogger();
    const result = await runJob(job, { args: { n: '40' }, logger });
    expect(result.status).toBe('finished');
    const fromWorker = records.find((r) => r.msg === 'sink finished');
    expect(fromWorker).toMatchObject({
      level: 'warn',
      fields: {
        job: 'job-api.mjs',
        task: expect.stringMatching(/log sink/),
        operator: 'log sink',
        attempt: 0,
        records: 40,
        err: { name: 'RangeError', message: 'just a test', stack: expect.any(String) },
      },
    });
    expect(records.find((r) => r.msg === 'writer opened')).toMatchObject({
      level: 'info',
      fields: { subtask: 0 },
    });
    expect(records.find((r) => r.msg === 'job deployed')).toMatchObject({
      level: 'info',
      fields: { job: 'job-api.mjs', attempt: 0 },
    });
    expect(records.at(-1)).toMatchObject({ level: 'info', msg: 'job ended', fields: { status: 'finished' } });
  });

  it('gets the failure and each restart', async () => {
    const { logger, records } = capturingLogger();
    await expect(
      runJob(fixture('failing.mjs'), {
        args: { failure: 'throw', at: '3', n: '10' },
        restartStrategy: { type: 'fixed-delay', attempts: 1, delay: 0 },
        logger,
      }),
    ).rejects.toThrow(/after 1 restart/);
    expect(records.filter((r) => r.msg === 'task failed; restarting')).toMatchObject([
      { level: 'warn', fields: { attempt: 1, err: { name: 'TaskFailureError' } } },
    ]);
    expect(records.at(-1)).toMatchObject({ level: 'error', msg: 'job failed' });
  });
});

describe('signal', () => {
  it('aborting cancels the running job: done rejects with an AbortError whose cause is the reason', async () => {
    const controller = new AbortController();
    const client = await startJob(job, {
      args: { n: '100000000', rate: '1000' },
      signal: controller.signal,
    });
    const reason = new Error('user pressed stop');
    client.once('deployed', () => controller.abort(reason));
    const error = await client.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(JobAbortedError);
    expect(error).toMatchObject({ name: 'AbortError', cause: reason });
  });

  it('an already-aborted signal rejects at once, before the job module is even loaded', async () => {
    const reason = new Error('too late');
    const signal = AbortSignal.abort(reason);
    await expect(startJob(fixture('does-not-exist.mjs'), { signal })).rejects.toMatchObject({
      name: 'AbortError',
      cause: reason,
    });
    await expect(runJob(job, { signal })).rejects.toBeInstanceOf(JobAbortedError);
  });
});

describe('options', () => {
  it('a misspelt option rejects before anything runs, with a suggestion', async () => {
    await expect(runJob(job, { parallelizm: 2 } as never)).rejects.toBeInstanceOf(UnknownOptionError);
    await expect(runJob(job, { parallelizm: 2 } as never)).rejects.toThrow(/did you mean parallelism\?/);
  });
});

describe('typed events', () => {
  it('listeners get typed payloads; unknown event names do not compile', async () => {
    const client: JobClient = await startJob(job, { args: { n: '10' }, logger: capturingLogger().logger });
    const deployed: DeployedEvent[] = [];
    client.on('deployed', (e) => {
      // e is a DeployedEvent: its fields type-check without a cast.
      const attempt: number = e.attempt;
      deployed.push({ attempt, restoredFrom: e.restoredFrom });
    });
    // @ts-expect-error not an event of JobClient
    client.on('deploy', () => undefined);
    // @ts-expect-error the payload of 'checkpoint' has no `attempt`
    client.on('checkpoint', (s) => s.attempt);
    await client.done;
    expect(deployed).toEqual([{ attempt: 0, restoredFrom: undefined }]);
  });
});
