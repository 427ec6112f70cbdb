import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../../src/cli/run-args.js';
import { UsageError } from '../../../src/cli/usage-error.js';
import { type JobOptions, resolveJobOptions } from '../../../src/coordinator/job-options.js';
import { InvalidOptionError, UnknownOptionError } from '../../../src/errors.js';

const ok: JobOptions = {
  checkpointing: { interval: 100, dir: '/shared/cp' },
  cluster: { servers: 'nats://127.0.0.1:4222', name: 'sums', instances: 3 },
};

function invalid(o: JobOptions): InvalidOptionError {
  try {
    resolveJobOptions(o);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidOptionError);
    return e as InvalidOptionError;
  }
  throw new Error('resolveJobOptions did not throw');
}

describe('the cluster job option', () => {
  it('resolves with defaults; the checkpoint directory comes from checkpointing.dir or cluster.checkpointDir', () => {
    expect(resolveJobOptions(ok).cluster).toEqual({
      servers: ['nats://127.0.0.1:4222'],
      name: 'sums',
      timeoutMs: 3000,
      instances: 3,
      checkpointDir: '/shared/cp',
      rebalanceDelayMs: 1000,
    });
    const c = resolveJobOptions({
      checkpointing: { interval: 100 },
      cluster: { servers: ['a', 'b'], name: 'x', checkpointDir: '/s' },
    }).cluster;
    expect(c?.instances).toBe(1);
    expect(c?.checkpointDir).toBe('/s');
    expect(c?.maxRecordBytes).toBeUndefined();
    expect(
      resolveJobOptions({ ...ok, cluster: { ...ok.cluster!, maxRecordBytes: 65_536 } }).cluster,
    ).toMatchObject({
      maxRecordBytes: 65_536,
    });
    expect(resolveJobOptions({}).cluster).toBeNull();
  });

  it('honours incremental checkpoints (the base chunks of a delta are in the shared directory)', () => {
    const o = resolveJobOptions({
      ...ok,
      checkpointing: { ...ok.checkpointing!, incremental: true, fullEvery: 5 },
    });
    expect(o.checkpointing).toMatchObject({ incremental: true, fullEvery: 5 });
    expect(o.cluster?.checkpointDir).toBe('/shared/cp');
  });

  it('names the problem', () => {
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, instances: 0 } }).message).toMatch(
      /cluster\.instances/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, instances: 1.5 } }).message).toMatch(
      /cluster\.instances/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, name: 'a.b' } }).message).toMatch(/cluster\.name/);
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, rebalanceDelayMs: -1 } }).message).toMatch(
      /cluster\.rebalanceDelayMs/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, rebalanceDelayMs: 60_001 } }).message).toMatch(
      /cluster\.rebalanceDelayMs/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, maxRecordBytes: 1023 } }).message).toMatch(
      /cluster\.maxRecordBytes.*at least 1024/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, maxRecordBytes: 4096.5 } }).message).toMatch(
      /cluster\.maxRecordBytes/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, servers: [] } }).message).toMatch(/cluster\.servers/);
    expect(invalid({ cluster: ok.cluster }).message).toMatch(/needs checkpointing/);
    expect(
      invalid({ ...ok, checkpointing: { interval: 100, dir: '/d', mode: 'at-least-once' } }).message,
    ).toMatch(/exactly-once/);
    expect(invalid({ ...ok, checkpointing: { interval: 100 } }).message).toMatch(
      /cluster\.checkpointDir.*required/,
    );
    expect(invalid({ ...ok, cluster: { ...ok.cluster!, checkpointDir: '/other' } }).message).toMatch(
      /differs/,
    );
    // restoreFrom: 'latest' is the shared directory; a path a savepoint (src/cluster/cluster-restore.ts).
    expect(resolveJobOptions({ ...ok, restoreFrom: 'latest' }).restoreFrom).toBe('latest');
    // A restart strategy applies to a cluster job (the coordinator decides after a task's failure).
    expect(
      resolveJobOptions({ ...ok, restartStrategy: { type: 'fixed-delay', attempts: 3, delay: 0 } })
        .restartStrategy,
    ).toEqual({ type: 'fixed-delay', attempts: 3, delay: 0 });
    expect(invalid({ ...ok, restartStrategy: { type: 'fixed-delay', attempts: -1 } }).message).toMatch(
      /restartStrategy\.attempts/,
    );
    expect(() => resolveJobOptions({ ...ok, cluster: { ...ok.cluster!, instance: 2 } as never })).toThrow(
      UnknownOptionError,
    );
  });

  it('weir run --cluster URL --cluster-name NAME --instances N', () => {
    const r = parseRunArgs([
      'job.mjs',
      '--cluster',
      'nats://a:4222,nats://b:4222',
      '--cluster-name',
      'sums',
      '--instances',
      '3',
      '--checkpoint-dir',
      '/shared',
    ]);
    expect(r.options.cluster).toEqual({
      servers: ['nats://a:4222', 'nats://b:4222'],
      name: 'sums',
      instances: 3,
    });
    expect(resolveJobOptions(r.options).cluster?.checkpointDir).toBe('/shared');
    expect(() => parseRunArgs(['job.mjs', '--cluster', 'nats://a'])).toThrow(UsageError);
    expect(() => parseRunArgs(['job.mjs', '--cluster-name', 'x'])).toThrow(/needs --cluster/);
    expect(() => parseRunArgs(['job.mjs', '--instances', '2'])).toThrow(/needs --cluster/);
    expect(() =>
      parseRunArgs(['job.mjs', '--cluster', 'nats://a', '--cluster-name', 'x', '--instances', 'two']),
    ).toThrow(/--instances must be a number/);
  });
});
