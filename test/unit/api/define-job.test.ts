import { describe, expect, it } from 'vitest';
import type { DataStream } from '../../../src/api/data-stream.js';
import {
  buildStreamGraph,
  defineJob,
  isJobDefinition,
  loadJobDefinition,
} from '../../../src/api/define-job.js';
import { InvalidGraphError, JobModuleError } from '../../../src/errors.js';
import { fakeSink, fakeSource } from '../graph/fake-connectors.js';

const job = defineJob((env, args) => {
  env
    .fromSource(fakeSource(), 'numbers')
    .map((n: number) => n * Number(args.factor ?? 1))
    .name(`times ${args.factor ?? 1}`)
    .sinkTo(fakeSink('out'));
});

describe('defineJob / isJobDefinition', () => {
  it('brands the definition so that any copy of weir recognises it', () => {
    expect(isJobDefinition(job)).toBe(true);
    // What another copy of the module (src/ vs dist/) produces: same registered symbol, no shared class.
    const foreign = { [Symbol.for('weir.job')]: 1, build: () => {} };
    expect(isJobDefinition(foreign)).toBe(true);
    expect(Object.isFrozen(job)).toBe(true);
  });

  it('rejects look-alikes', () => {
    expect(isJobDefinition(() => {})).toBe(false);
    expect(isJobDefinition({ build: () => {} })).toBe(false);
    expect(isJobDefinition({ [Symbol('weir.job')]: 1, build: () => {} })).toBe(false);
    expect(isJobDefinition({ [Symbol.for('weir.job')]: 1 })).toBe(false);
    expect(isJobDefinition(null)).toBe(false);
  });

  it('requires a build function', () => {
    expect(() => defineJob(42 as never)).toThrow(TypeError);
    expect(() => defineJob(42 as never)).toThrow(/expected a build function/);
  });
});

describe('buildStreamGraph', () => {
  it('builds the same graph on every call: ids come from the environment, not module state', () => {
    const a = buildStreamGraph(job, { factor: '3' });
    const b = buildStreamGraph(job, { factor: '3' });
    const shape = (g: typeof a) => g.nodes.map((n) => [n.id, n.name, n.uid, n.spec.kind]);
    expect(shape(a)).toEqual([
      [0, 'numbers', 'source:numbers:0', 'source'],
      [1, 'times 3', 'map:times 3:0', 'map'],
      [2, 'sink: out', 'sink:sink: out:0', 'sink'],
    ]);
    expect(shape(b)).toEqual(shape(a));
  });

  it('passes args through, frozen', () => {
    let seen: Record<string, string> | undefined;
    buildStreamGraph(
      defineJob((env, args) => {
        seen = args;
        env.fromSource(fakeSource()).sinkTo(fakeSink());
      }),
      { n: '10' },
    );
    expect(seen).toEqual({ n: '10' });
    expect(Object.isFrozen(seen)).toBe(true);
  });

  it('returns a frozen graph', () => {
    const g = buildStreamGraph(job);
    expect(Object.isFrozen(g.nodes)).toBe(true);
    expect(Object.isFrozen(g.nodes[1])).toBe(true);
    expect(Object.isFrozen(g.nodes[1].inputs)).toBe(true);
  });

  it('rejects an async build function', () => {
    const asyncJob = defineJob((async (env: never) => {
      void env;
    }) as never);
    expect(() => buildStreamGraph(asyncJob)).toThrow(JobModuleError);
    expect(() => buildStreamGraph(asyncJob)).toThrow(
      /returned a promise; it must build the graph synchronously/,
    );
  });

  it('rejects streams used after the build returned', () => {
    let kept: DataStream<number> | undefined;
    buildStreamGraph(
      defineJob((env) => {
        kept = env.fromSource(fakeSource<number>());
        kept.sinkTo(fakeSink());
      }),
    );
    expect(() => kept!.map((n) => n)).toThrow(InvalidGraphError);
    expect(() => kept!.name('late')).toThrow(/already built/);
  });

  it('wraps errors the build throws in a JobModuleError naming the module, the error as cause', () => {
    const boom = new Error('boom');
    let thrown: unknown;
    try {
      buildStreamGraph(
        defineJob(() => {
          throw boom;
        }),
        {},
        'jobs/my-job.mjs',
      );
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(JobModuleError);
    expect((thrown as Error).message).toBe(
      'job module jobs/my-job.mjs: its build function threw Error: boom',
    );
    expect((thrown as Error).cause).toBe(boom);
  });
});

describe('loadJobDefinition', () => {
  it('returns the default export', () => {
    expect(loadJobDefinition({ default: job }, 'jobs/a.ts')).toBe(job);
  });

  it('accepts a CommonJS-interop namespace (default.default)', () => {
    expect(loadJobDefinition({ default: { default: job } }, 'jobs/a.ts')).toBe(job);
  });

  function failure(ns: unknown): JobModuleError {
    try {
      loadJobDefinition(ns, 'jobs/a.ts');
    } catch (err) {
      expect(err).toBeInstanceOf(JobModuleError);
      return err as JobModuleError;
    }
    throw new Error('expected a JobModuleError');
  }

  it('names the module and what it exports when there is no default export', () => {
    const err = failure({ job, other: 1 });
    expect(err.message).toBe(
      'job module jobs/a.ts: has no default export (it exports: job, other); ' +
        'a job module must `export default defineJob((env, args) => { ... })`',
    );
    expect(err.module).toBe('jobs/a.ts');
  });

  it('explains a default export that is a bare build function', () => {
    expect(failure({ default: () => {} }).message).toMatch(
      /jobs\/a\.ts: the default export is a plain function, not a defineJob\(\.\.\.\) result; wrap it/,
    );
  });

  it('explains a default export of another kind', () => {
    expect(failure({ default: 42 }).message).toMatch(
      /the default export is 42, not a defineJob\(\.\.\.\) result/,
    );
    expect(failure({ default: { build: () => {} } }).message).toMatch(/the default export is an object/);
  });

  it('rejects a non-object namespace', () => {
    expect(failure(undefined).message).toMatch(/expected a module namespace object, got undefined/);
  });
});
