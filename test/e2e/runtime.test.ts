/**
 * The runtime end to end: real jobs, real worker threads, exact results computed independently.
 */
import { describe, expect, it } from 'vitest';
import {
  InvalidGraphError,
  InvalidOptionError,
  JobFailedError,
  JobModuleError,
  runJob,
  TaskFailureError,
} from '../../dist/index.js';
import { example, finalByKey, fixture, threadCount, threadCountSettles } from './helpers.js';

describe('keyed sum', () => {
  it.each([
    [1, 'auto'],
    [2, 'auto'],
    [4, 'auto'],
    [2, 'msgpack'],
  ] as const)(
    'gives exact per-key sums and counts at parallelism %i (records: %s)',
    async (parallelism, recordFormat) => {
      const n = 20_000;
      const keys = 37;
      const result = await runJob(fixture('keyed-sum.mjs'), {
        parallelism,
        channels: { recordFormat },
        args: { n: String(n), keys: String(keys) },
      });
      const sums = result.sinks.sums as { key: string; sum: number; count: number }[];
      expect(sums).toHaveLength(n);
      const expected = new Map<string, { sum: number; count: number }>();
      for (let i = 0; i < n; i++) {
        const e = expected.get(`k${i % keys}`) ?? { sum: 0, count: 0 };
        e.sum += i;
        e.count += 1;
        expected.set(`k${i % keys}`, e);
      }
      const finals = finalByKey(sums, (r) => r.count);
      expect(finals.size).toBe(keys);
      for (const [key, e] of expected) expect(finals.get(key)).toEqual({ key, ...e });
      // every (key, count) appears exactly once
      expect(new Set(sums.map((r) => `${r.key}/${r.count}`)).size).toBe(n);
    },
  );
});

describe('word count (examples/word-count.ts)', () => {
  it.each([1, 2, 4])('counts every word exactly at parallelism %i', async (parallelism) => {
    const lines = 3000;
    const { lineFor } = await import('../../examples/word-count.js');
    const expected = new Map<string, number>();
    for (let i = 0; i < lines; i++)
      for (const w of lineFor(i).split(' ')) expected.set(w, (expected.get(w) ?? 0) + 1);
    const result = await runJob(example('word-count.ts'), { parallelism, args: { lines: String(lines) } });
    const counts = result.sinks.counts as { word: string; count: number }[];
    const finals = new Map<string, number>();
    for (const c of counts) finals.set(c.word, Math.max(finals.get(c.word) ?? 0, c.count));
    expect(finals).toEqual(expected);
  });
});

describe('topologies', () => {
  it('union merges both inputs', async () => {
    const r = await runJob(fixture('topologies.mjs'), {
      parallelism: 2,
      args: { topology: 'union', n: '500' },
    });
    expect((r.sinks.out as number[]).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i),
    );
  });

  it('connect routes each side to its own function', async () => {
    const r = await runJob(fixture('topologies.mjs'), {
      parallelism: 2,
      args: { topology: 'connect', n: '300' },
    });
    const out = r.sinks.out as string[];
    expect(out.filter((s) => s.startsWith('L')).length).toBe(300);
    expect(out.filter((s) => s.startsWith('R')).length).toBe(300);
    expect(new Set(out).size).toBe(600);
  });

  it('keyed connect shares per-key state between both inputs', async () => {
    const r = await runJob(fixture('topologies.mjs'), {
      parallelism: 3,
      args: { topology: 'keyed-connect', n: '200' },
    });
    const finals = finalByKey(r.sinks.out as { key: number; seen: number }[], (x) => x.seen);
    expect(finals.size).toBe(10);
    for (const v of finals.values()) expect(v.seen).toBe(40); // 20 per side per key
  });

  it('broadcast delivers every record to every subtask', async () => {
    const r = await runJob(fixture('topologies.mjs'), {
      parallelism: 3,
      args: { topology: 'broadcast', n: '100' },
    });
    const out = r.sinks.out as { x: number; subtask: number }[];
    expect(out).toHaveLength(300);
    for (let s = 0; s < 3; s++) {
      expect(
        out
          .filter((o) => o.subtask === s)
          .map((o) => o.x)
          .sort((a, b) => a - b),
      ).toEqual(Array.from({ length: 100 }, (_, i) => i));
    }
  });

  it('rebalance spreads records round-robin over subtasks', async () => {
    const r = await runJob(fixture('topologies.mjs'), {
      parallelism: 3,
      args: { topology: 'rebalance', n: '300' },
    });
    const out = r.sinks.out as { x: number; subtask: number }[];
    expect(out.map((o) => o.x).sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    for (let s = 0; s < 3; s++) expect(out.filter((o) => o.subtask === s)).toHaveLength(100);
  });

  it('chains forward operators of equal parallelism into one task', async () => {
    const r = await runJob(fixture('keyed-sum.mjs'), { parallelism: 2, args: { n: '10' } });
    expect(r.plan.vertices.map((v) => v.operators.map((o) => o.name))).toEqual([
      ['numbers', 'map'],
      ['running sum', 'sink: sums'],
    ]);
  });
});

describe('failures', () => {
  it.each([
    ['throw', /exploding map.*RangeError: boom at 50/s],
    ['exit', /exit|exited/i],
    ['async', /async boom at 50/],
  ])(
    'a %s in user code fails the job with a typed error, and no thread is left',
    async (failure, message) => {
      const before = threadCount();
      const error = await runJob(fixture('failing.mjs'), { parallelism: 2, args: { failure } }).catch(
        (e) => e,
      );
      expect(error).toBeInstanceOf(JobFailedError);
      expect(error.cause).toBeInstanceOf(TaskFailureError);
      expect(error.cause.message).toMatch(message);
      expect(error.cause.task).toMatch(/numbers -> exploding map \(\d\/2\)/);
      expect(await threadCountSettles(before)).toBe(before);
    },
  );

  it('names the user stack of a throw', async () => {
    const error = await runJob(fixture('failing.mjs'), { parallelism: 1, args: { failure: 'throw' } }).catch(
      (e) => e,
    );
    expect(error.cause.operator).toBe('exploding map');
    expect(error.cause.originalStack).toMatch(/failing\.mjs/);
  });

  it('a key that cannot be serialized names the keyed operator', async () => {
    const error = await runJob(fixture('failing.mjs'), {
      parallelism: 2,
      args: { failure: 'bad-key' },
    }).catch((e) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error.cause.operator).toMatch(/after keyBy/);
    expect(error.cause.message).toMatch(/cannot be serialized \(a function\)/);
  });

  it('a module without a defineJob default export is a JobModuleError', async () => {
    const error = await runJob(fixture('no-default.mjs')).catch((e) => e);
    expect(error).toBeInstanceOf(JobModuleError);
    expect(error.message).toMatch(/has no default export \(it exports: job\)/);
  });

  it('a build function that throws is a JobModuleError naming the module, with the thrown error as cause', async () => {
    const error = await runJob(fixture('throwing-build.mjs')).catch((e) => e);
    expect(error).toBeInstanceOf(JobModuleError);
    expect(error.message).toMatch(
      /throwing-build\.mjs: its build function threw TypeError: cannot build: args\.mode is missing/,
    );
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(error.cause.stack).toMatch(/throwing-build\.mjs/);
  });

  it('a graph without a sink is an InvalidGraphError', async () => {
    const error = await runJob(fixture('no-sink.mjs')).catch((e) => e);
    expect(error).toBeInstanceOf(InvalidGraphError);
    expect(error.message).toMatch(/sink/);
  });

  it('parallelism < 1 is rejected up front', async () => {
    await expect(runJob(fixture('keyed-sum.mjs'), { parallelism: 0 })).rejects.toThrow(InvalidOptionError);
    const error = await runJob(fixture('bad-parallelism.mjs')).catch((e) => e);
    expect(error.message).toMatch(/parallelism/);
    expect(error.message).toMatch(/map/);
  });
});
