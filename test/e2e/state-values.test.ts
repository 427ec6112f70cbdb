/**
 * State values survive a snapshot and a restore unchanged on both backends: -0 (msgpack turned it
 * into 0), Maps (they came back as plain objects), Sets (as arrays), Dates. A state value holding
 * a function (msgpack stored `undefined`) fails the job with a ValueNotSerializableError whose
 * message names the state and its operator at the top.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobFailedError, runJob, startJob, ValueNotSerializableError } from '../../dist/index.js';
import { fixture } from './helpers.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('state values', () => {
  it.each(['heap', 'lmdb'] as const)(
    'keep -0, Maps, Sets and Dates through a savepoint (%s)',
    async (stateBackend) => {
      dir = mkdtempSync(path.join(tmpdir(), 'weir-state-values-'));
      const savepointDir = path.join(dir, 'savepoint');
      const client = await startJob(fixture('state-values.mjs'), {
        parallelism: 2,
        stateBackend,
        checkpointing: { interval: 50, dir: path.join(dir, 'run1') },
        args: { phase: 'write' },
      });
      // A checkpoint with state in it: records were processed and stored.
      await new Promise<void>((resolve) => {
        const onCheckpoint = (c: { bytes: number }) => {
          if (c.bytes === 0) return;
          client.off('checkpoint', onCheckpoint);
          resolve();
        };
        client.on('checkpoint', onCheckpoint);
      });
      await client.stopWithSavepoint(savepointDir);
      await client.done;

      const second = await runJob(fixture('state-values.mjs'), {
        parallelism: 2,
        stateBackend,
        restoreFrom: savepointDir,
        checkpointing: { interval: 50, dir: path.join(dir, 'run2') },
        args: { phase: 'verify' },
      });
      const out = second.sinks.out as Record<string, unknown>[];
      expect(out.length).toBeGreaterThan(0);
      for (const r of out)
        expect(r).toEqual({
          key: r.key,
          negativeZero: true,
          nestedNegativeZero: true,
          map: true,
          set: true,
          date: true,
        });
    },
  );

  it.each(['heap', 'lmdb'] as const)(
    'holding a function fail the job naming state and operator (%s)',
    async (stateBackend) => {
      dir = mkdtempSync(path.join(tmpdir(), 'weir-state-values-'));
      const error = await runJob(fixture('state-values.mjs'), {
        parallelism: 1,
        stateBackend,
        checkpointing: { interval: 50, dir: path.join(dir, 'run') },
        args: { phase: 'function' },
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobFailedError);
      const top = (error as JobFailedError).message.split('\n')[0];
      expect(top).toMatch(
        /state "rich value" of operator rich state cannot be serialized: it holds a function/,
      );
      const failure = (error as JobFailedError).cause as { operator?: string; cause?: unknown };
      expect(failure.operator).toBe('rich state');
      expect((failure.cause as Error).name).toBe(ValueNotSerializableError.name);
    },
  );
});
