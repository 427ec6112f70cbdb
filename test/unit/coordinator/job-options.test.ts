import { describe, expect, it } from 'vitest';
import { resolveJobOptions } from '../../../src/coordinator/job-options.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('resolveJobOptions: state options', () => {
  it('accepts incremental checkpoints, with fullEvery defaulting to 10', () => {
    const o = resolveJobOptions({ checkpointing: { interval: 100, incremental: true } });
    expect(o.checkpointing).toMatchObject({ incremental: true, fullEvery: 10 });
    expect(resolveJobOptions({ checkpointing: { interval: 100 } }).checkpointing?.incremental).toBe(false);
    expect(
      resolveJobOptions({ checkpointing: { interval: 100, incremental: true, fullEvery: 1 } }).checkpointing
        ?.fullEvery,
    ).toBe(1);
  });

  it('rejects a bad fullEvery or a non-boolean incremental, naming the option', () => {
    for (const fullEvery of [0, 1.5, -1, '3' as unknown as number]) {
      expect(() =>
        resolveJobOptions({ checkpointing: { interval: 100, incremental: true, fullEvery } }),
      ).toThrow(/checkpointing\.fullEvery/);
    }
    expect(() =>
      resolveJobOptions({ checkpointing: { interval: 100, incremental: 'yes' as unknown as boolean } }),
    ).toThrow(InvalidOptionError);
  });

  it("accepts stateBackend 'lmdb' and rejects unknown backends", () => {
    expect(resolveJobOptions({ stateBackend: 'lmdb' }).stateBackend).toBe('lmdb');
    expect(resolveJobOptions({}).stateBackend).toBe('heap');
    expect(() => resolveJobOptions({ stateBackend: 'rocksdb' as 'heap' })).toThrow(/stateBackend/);
  });
});

describe('resolveJobOptions: channel options', () => {
  it("defaults recordFormat to 'auto', accepts 'msgpack', rejects anything else naming the option", () => {
    expect(resolveJobOptions({}).channels.recordFormat).toBe('auto');
    expect(resolveJobOptions({ channels: { recordFormat: 'msgpack' } }).channels.recordFormat).toBe(
      'msgpack',
    );
    expect(() => resolveJobOptions({ channels: { recordFormat: 'json' as 'auto' } })).toThrow(
      /channels\.recordFormat/,
    );
  });
});
