import { describe, expect, it } from 'vitest';
import { DEFAULT_BUFFER_DEBLOAT } from '../../../src/channels/buffer-debloater.js';
import {
  DEFAULT_WAKE_DELAY_MS,
  type JobOptions,
  resolveJobOptions,
  workerNiceOf,
} from '../../../src/coordinator/job-options.js';
import { InvalidOptionError, UnknownOptionError } from '../../../src/errors.js';

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

describe('resolveJobOptions: alignmentTimeout', () => {
  it('is off (null) by default, takes whole ms >= 0, and only with aligned exactly-once', () => {
    expect(
      resolveJobOptions({ checkpointing: { interval: 100 } }).checkpointing?.alignmentTimeout,
    ).toBeNull();
    for (const alignmentTimeout of [0, 250]) {
      expect(
        resolveJobOptions({ checkpointing: { interval: 100, alignmentTimeout } }).checkpointing
          ?.alignmentTimeout,
      ).toBe(alignmentTimeout);
    }
    for (const bad of [
      { interval: 100, alignmentTimeout: -1 },
      { interval: 100, alignmentTimeout: 1.5 },
      { interval: 100, alignmentTimeout: '10' as unknown as number },
      { interval: 100, alignmentTimeout: 10, mode: 'at-least-once' as const },
      { interval: 100, alignmentTimeout: 10, unaligned: true },
    ]) {
      expect(() => resolveJobOptions({ checkpointing: bad })).toThrow(
        expect.objectContaining({
          name: 'InvalidOptionError',
          message: expect.stringContaining('alignmentTimeout'),
        }),
      );
    }
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

  it('debloat: off by default, true takes the defaults, an object overrides them, bad values are named', () => {
    expect(resolveJobOptions({}).channels.debloat).toBeNull();
    expect(resolveJobOptions({ channels: { debloat: false } }).channels.debloat).toBeNull();
    expect(resolveJobOptions({ channels: { debloat: true } }).channels.debloat).toEqual(
      DEFAULT_BUFFER_DEBLOAT,
    );
    expect(resolveJobOptions({ channels: { debloat: { targetMs: 50 } } }).channels.debloat).toEqual({
      ...DEFAULT_BUFFER_DEBLOAT,
      targetMs: 50,
    });
    expect(() => resolveJobOptions({ channels: { debloat: { targetMs: -1 } } })).toThrow(
      /channels\.debloat\.targetMs/,
    );
    expect(() => resolveJobOptions({ channels: { debloat: 'on' as unknown as boolean } })).toThrow(
      InvalidOptionError,
    );
    expect(() => resolveJobOptions({ channels: { debloat: { target: 20 } as never } })).toThrow(
      UnknownOptionError,
    );
  });

  it('wakeDelayMs: 20 by default, 0 turns wake-up batching off, bad values are named', () => {
    expect(resolveJobOptions({}).channels.wakeDelayMs).toBe(DEFAULT_WAKE_DELAY_MS);
    expect(DEFAULT_WAKE_DELAY_MS).toBe(20);
    expect(resolveJobOptions({ channels: { wakeDelayMs: 0 } }).channels.wakeDelayMs).toBe(0);
    expect(() => resolveJobOptions({ channels: { wakeDelayMs: -1 } })).toThrow(/channels\.wakeDelayMs/);
    expect(() => resolveJobOptions({ channels: { wakeDelayMs: 1.5 } })).toThrow(/channels\.wakeDelayMs/);
  });
});

describe('resolveJobOptions: unknown keys', () => {
  const rejects = (options: unknown, option: string, suggestion: string | undefined) => {
    let error: unknown;
    try {
      resolveJobOptions(options as JobOptions);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnknownOptionError);
    expect(error).toMatchObject({ option, suggestion });
  };

  it('top level: a misspelt key is an error with a suggestion', () => {
    rejects({ parallelizm: 2 }, 'parallelizm', 'parallelism');
    rejects({ restorefrom: 'latest' }, 'restorefrom', 'restoreFrom');
    rejects({ colour: 'blue' }, 'colour', undefined);
  });

  it('nested objects: checkpointing, channels and each restart strategy type have their own keys', () => {
    rejects({ checkpointing: { interval: 100, intreval: 5 } }, 'checkpointing.intreval', 'interval');
    rejects({ channels: { ringbytes: 1 << 20 } }, 'channels.ringbytes', 'ringBytes');
    rejects({ restartStrategy: { type: 'fixed-delay', attempt: 3 } }, 'restartStrategy.attempt', 'attempts');
    // `initial` belongs to exponential-delay only.
    rejects({ restartStrategy: { type: 'fixed-delay', initial: 3 } }, 'restartStrategy.initial', undefined);
    rejects({ restartStrategy: { type: 'none', attempts: 3 } }, 'restartStrategy.attempts', undefined);
    expect(() =>
      resolveJobOptions({ restartStrategy: { type: 'exponential-delay', initial: 10, jitter: 0 } }),
    ).not.toThrow();
  });

  it('a bad restart strategy is rejected up front, not when the job first fails', () => {
    expect(() => resolveJobOptions({ restartStrategy: { type: 'fixed-delay', delay: -1 } })).toThrow(
      /restartStrategy\.delay/,
    );
  });
});

describe('resolveJobOptions: restoreFrom, signal, logger', () => {
  it('restoreFrom without checkpointing is an error (it would start from scratch)', () => {
    expect(() => resolveJobOptions({ restoreFrom: 'latest' })).toThrow(InvalidOptionError);
    expect(() => resolveJobOptions({ restoreFrom: '/tmp/savepoint' })).toThrow(
      /restoreFrom: needs `checkpointing`/,
    );
    expect(
      resolveJobOptions({ restoreFrom: 'latest', checkpointing: { interval: 100, dir: '/tmp/x' } })
        .restoreFrom,
    ).toBe('latest');
  });

  it('signal must be an AbortSignal', () => {
    const signal = new AbortController().signal;
    expect(resolveJobOptions({ signal }).signal).toBe(signal);
    expect(() => resolveJobOptions({ signal: { aborted: false } as unknown as AbortSignal })).toThrow(
      /invalid option signal/,
    );
  });

  it('logger must have debug, info, warn and error functions', () => {
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    expect(resolveJobOptions({ logger }).logger).toBe(logger);
    expect(resolveJobOptions({}).logger).toBeUndefined();
    expect(() => resolveJobOptions({ logger: { ...logger, warn: 'x' } as unknown as typeof logger })).toThrow(
      /its warn is not a function/,
    );
  });
});

describe('resolveJobOptions: workerNice', () => {
  it('is 0 (threads keep their priority) unless given', () => {
    expect(resolveJobOptions({}).workerNice).toBe(0);
    expect(workerNiceOf(undefined, 'linux')).toBe(0);
    expect(workerNiceOf(10, 'linux')).toBe(10);
    expect(workerNiceOf(19, 'linux')).toBe(19);
  });

  it('rejects what is not an integer in 0..19 with a typed error naming it', () => {
    for (const bad of [-1, 20, 2.5, '10', null]) {
      expect(() => workerNiceOf(bad, 'linux')).toThrow(InvalidOptionError);
      expect(() => workerNiceOf(bad, 'linux')).toThrow(/workerNice/);
    }
    expect(() => resolveJobOptions({ workerNice: 20 })).toThrow(/workerNice.*\[0, 19\]/);
  });

  it('refuses a non-zero value off Linux, where it would lower the whole process, and allows 0', () => {
    for (const platform of ['darwin', 'win32', 'freebsd'] as const) {
      expect(() => workerNiceOf(5, platform)).toThrow(InvalidOptionError);
      expect(() => workerNiceOf(5, platform)).toThrow(new RegExp(`workerNice.*only Linux.*${platform}`));
      expect(workerNiceOf(0, platform)).toBe(0);
    }
  });
});
