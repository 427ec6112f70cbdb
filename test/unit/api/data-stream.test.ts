import { describe, expect, it } from 'vitest';
import type { Collector, KeyedContext, RuntimeContext } from '../../../src/api/functions.js';
import { InvalidGraphError, InvalidOptionError } from '../../../src/errors.js';
import type { StreamGraph, StreamNode } from '../../../src/graph/stream-graph.js';
import { graphOf } from '../graph/build-graph.js';
import { fakeSink, fakeSource } from '../graph/fake-connectors.js';

function node(g: StreamGraph, name: string): StreamNode {
  const found = g.nodes.filter((n) => n.name === name);
  expect(found).toHaveLength(1);
  return found[0];
}

/** [source name, partitioning, inputIndex] of each input of `name`. */
function inputsOf(g: StreamGraph, name: string): [string, string, number][] {
  return node(g, name).inputs.map((e) => [g.nodes[e.sourceId].name, e.partitioning, e.inputIndex]);
}

describe('one-input operators', () => {
  it('adds one node per operator, with its spec and a forward edge from the previous one', () => {
    const mapFn = (n: number) => n + 1;
    const filterFn = (n: number) => n > 1;
    const flatMapFn = (n: number, _ctx: RuntimeContext, out: Collector<number>) => out.collect(n);
    const processFn = (n: number, _ctx: RuntimeContext, out: Collector<string>) => out.collect(String(n));
    const g = graphOf((env) => {
      env
        .fromSource(fakeSource<number>('seq'), 'numbers')
        .map(mapFn)
        .filter(filterFn)
        .flatMap(flatMapFn)
        .process(processFn)
        .sinkTo(fakeSink('out'));
    });
    expect(g.nodes.map((n) => [n.id, n.name, n.spec.kind, n.parallelism])).toEqual([
      [0, 'numbers', 'source', undefined],
      [1, 'map', 'map', undefined],
      [2, 'filter', 'filter', undefined],
      [3, 'flat-map', 'flat-map', undefined],
      [4, 'process', 'process', undefined],
      [5, 'sink: out', 'sink', undefined],
    ]);
    const fns = g.nodes.map((n) => ('fn' in n.spec ? n.spec.fn : undefined));
    expect(fns.slice(1, 5)).toEqual([mapFn, filterFn, flatMapFn, processFn]);
    for (const n of g.nodes.slice(1)) {
      expect(n.inputs).toEqual([
        { sourceId: n.id - 1, targetId: n.id, inputIndex: 0, partitioning: 'forward' },
      ]);
    }
    expect(node(g, 'numbers').inputs).toEqual([]);
  });

  it('names a source by its connector type unless given a name', () => {
    const g = graphOf((env) => env.fromSource(fakeSource('sequence')).sinkTo(fakeSink()));
    expect(g.nodes[0].name).toBe('sequence');
  });

  it('rejects non-functions with a TypeError naming the call', () => {
    expect(() => graphOf((env) => env.fromSource(fakeSource()).map(1 as never))).toThrow(
      'map(): expected a function, got 1',
    );
    // Thrown inside the build function: wrapped in a JobModuleError, the TypeError as its cause.
    expect(() => graphOf((env) => env.fromSource(fakeSource()).keyBy(null as never))).toThrow(
      expect.objectContaining({ cause: expect.any(TypeError) }),
    );
    expect(() => graphOf((env) => env.fromSource({} as never))).toThrow(/fromSource\(\): expected a source/);
    expect(() => graphOf((env) => env.fromSource(fakeSource()).sinkTo({} as never))).toThrow(
      /sinkTo\(\): expected a sink/,
    );
  });
});

describe('partitioning of the next edge', () => {
  it('rebalance() and broadcast() set the partitioning of the next edge only', () => {
    const g = graphOf((env) => {
      const s = env.fromSource(fakeSource(), 'src');
      s.rebalance()
        .map((x) => x)
        .name('r')
        .sinkTo(fakeSink('a'));
      s.broadcast()
        .map((x) => x)
        .name('b')
        .sinkTo(fakeSink('b'));
      s.map((x) => x)
        .name('f')
        .sinkTo(fakeSink('c'));
    });
    expect(inputsOf(g, 'r')).toEqual([['src', 'rebalance', 0]]);
    expect(inputsOf(g, 'b')).toEqual([['src', 'broadcast', 0]]);
    expect(inputsOf(g, 'f')).toEqual([['src', 'forward', 0]]);
    expect(inputsOf(g, 'sink: a')).toEqual([['r', 'forward', 0]]);
  });

  it('keyBy() makes a hash edge carrying the key selector into a keyed operator', () => {
    const selector = (n: number) => n % 10;
    const fn = (_n: number, _ctx: KeyedContext<number>, _out: Collector<number>) => {};
    const g = graphOf((env) => {
      env.fromSource(fakeSource<number>(), 'src').keyBy(selector).process(fn).sinkTo(fakeSink());
    });
    const keyed = node(g, 'keyed-process');
    expect(keyed.spec).toEqual({ kind: 'keyed-process', fn, keySelector: selector });
    expect(keyed.inputs).toEqual([
      { sourceId: 0, targetId: 1, inputIndex: 0, partitioning: 'hash', keySelector: selector },
    ]);
  });

  it('reduce() and sum() are keyed reduces', () => {
    const selector = (r: { k: string; v: number }) => r.k;
    const reduceFn = (a: { k: string; v: number }, b: { k: string; v: number }) => ({ k: a.k, v: a.v + b.v });
    const g = graphOf((env) => {
      const keyed = env.fromSource(fakeSource<{ k: string; v: number }>()).keyBy(selector);
      keyed.reduce(reduceFn).sinkTo(fakeSink('r'));
      keyed.sum('v').sinkTo(fakeSink('s'));
    });
    const reduce = node(g, 'reduce');
    const sum = node(g, 'sum');
    expect(reduce.spec).toEqual({ kind: 'keyed-reduce', fn: reduceFn, keySelector: selector });
    expect(sum.spec.kind).toBe('keyed-reduce');
    if (sum.spec.kind !== 'keyed-reduce') throw new Error('unreachable');
    expect(sum.spec.keySelector).toBe(selector);
    expect(sum.spec.fn({ k: 'a', v: 1 }, { k: 'a', v: 2 })).toEqual({ k: 'a', v: 3 });
    expect(sum.inputs.map((e) => e.partitioning)).toEqual(['hash']);
  });

  it('sum() errors name the operator as finally named', () => {
    const g = graphOf((env) => {
      env
        .fromSource(fakeSource<number>())
        .keyBy((n) => n)
        .sum()
        .name('totals')
        .sinkTo(fakeSink());
    });
    const spec = node(g, 'totals').spec;
    if (spec.kind !== 'keyed-reduce') throw new Error('unreachable');
    expect(() => spec.fn(1, 'x' as never)).toThrow('sum() of operator "totals"');
  });
});

describe('union', () => {
  it('lets the next node consume several inputs, each keeping its partitioning', () => {
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource(), 'a');
      const b = env.fromSource(fakeSource(), 'b');
      const c = env.fromSource(fakeSource(), 'c');
      a.union(b.rebalance(), c.broadcast())
        .map((x) => x)
        .name('merged')
        .sinkTo(fakeSink());
    });
    expect(inputsOf(g, 'merged')).toEqual([
      ['a', 'forward', 0],
      ['b', 'rebalance', 0],
      ['c', 'broadcast', 0],
    ]);
  });

  it('keyBy after union hashes every input', () => {
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'a');
      const b = env.fromSource(fakeSource<number>(), 'b');
      a.union(b)
        .keyBy((n) => n)
        .process(() => {})
        .sinkTo(fakeSink());
    });
    expect(inputsOf(g, 'keyed-process')).toEqual([
      ['a', 'hash', 0],
      ['b', 'hash', 0],
    ]);
  });

  it('rejects streams of another environment', () => {
    let foreign: unknown;
    graphOf((env) => {
      foreign = env.fromSource(fakeSource());
      (foreign as { sinkTo(s: unknown): void }).sinkTo(fakeSink());
    });
    expect(() =>
      graphOf((env) => {
        env.fromSource(fakeSource()).union(foreign as never);
      }),
    ).toThrow('union(): the streams belong to different environments (different job builds)');
  });
});

describe('connect', () => {
  const co = { processElement1() {}, processElement2() {} };

  it('builds a two-input operator with input indexes 0 and 1', () => {
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'a');
      const b = env.fromSource(fakeSource<string>(), 'b');
      a.connect(b.broadcast()).process(co).sinkTo(fakeSink());
    });
    const n = node(g, 'co-process');
    expect(n.spec).toEqual({ kind: 'co-process', fn: co });
    expect(inputsOf(g, 'co-process')).toEqual([
      ['a', 'forward', 0],
      ['b', 'broadcast', 1],
    ]);
  });

  it('is keyed when both sides are keyed streams', () => {
    const k1 = (n: number) => n;
    const k2 = (s: string) => s.length;
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'a').keyBy(k1);
      const b = env.fromSource(fakeSource<string>(), 'b').keyBy(k2);
      const connected = a.connect(b);
      expect(connected.keyed).toBe(true);
      connected.process(co).sinkTo(fakeSink());
    });
    const n = node(g, 'co-process');
    expect(n.spec).toEqual({ kind: 'co-process', fn: co, keySelectors: [k1, k2] });
    expect(n.inputs.map((e) => [e.partitioning, e.inputIndex, e.keySelector])).toEqual([
      ['hash', 0, k1],
      ['hash', 1, k2],
    ]);
  });

  it('ConnectedStreams.keyBy keys both inputs', () => {
    const k1 = (n: number) => n;
    const k2 = (s: string) => s.length;
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'a');
      const b = env.fromSource(fakeSource<string>(), 'b');
      a.connect(b).keyBy(k1, k2).process(co).sinkTo(fakeSink());
    });
    const n = node(g, 'co-process');
    expect(n.spec).toEqual({ kind: 'co-process', fn: co, keySelectors: [k1, k2] });
    expect(n.inputs.map((e) => e.partitioning)).toEqual(['hash', 'hash']);
  });

  it('rejects connecting a keyed with a non-keyed stream, either way round', () => {
    expect(() =>
      graphOf((env) => {
        const a = env.fromSource(fakeSource<number>()).keyBy((n) => n);
        a.connect(env.fromSource(fakeSource<number>()) as never);
      }),
    ).toThrow('connect(): the first input is keyed but the second is not');
    expect(() =>
      graphOf((env) => {
        const b = env.fromSource(fakeSource<number>()).keyBy((n) => n);
        env.fromSource(fakeSource<number>()).connect(b as never);
      }),
    ).toThrow('connect(): the first input is not keyed but the second is');
  });

  it('requires both process functions', () => {
    expect(() =>
      graphOf((env) => {
        const a = env.fromSource(fakeSource<number>());
        a.connect(a).process({ processElement1() {} } as never);
      }),
    ).toThrow(/expected an object with processElement1 and processElement2/);
  });
});

describe('name, uid, setParallelism', () => {
  it('configure the operator that produced the stream, as in Flink', () => {
    const g = graphOf((env) => {
      env
        .fromSource(fakeSource())
        .setParallelism(1)
        .map((x) => x)
        .name('double')
        .uid('double-v1')
        .setParallelism(3)
        .keyBy((x) => x)
        .sum()
        .name('total')
        .setParallelism(2)
        .sinkTo(fakeSink())
        .name('out')
        .uid('sink-v1')
        .setParallelism(1);
    });
    expect(g.nodes.map((n) => [n.name, n.uid, n.parallelism])).toEqual([
      ['fake-source', 'source:fake-source:0', 1],
      ['double', 'double-v1', 3],
      ['total', 'keyed-reduce:total:0', 2],
      ['out', 'sink-v1', 1],
    ]);
  });

  it.each([0, -1, 1.5, Number.NaN, '2'])('rejects parallelism %s, naming the operator', (p) => {
    const build = () =>
      graphOf((env) => {
        env
          .fromSource(fakeSource())
          .map((x) => x)
          .name('enrich')
          .setParallelism(p as number);
      });
    expect(build).toThrow(InvalidOptionError);
    expect(build).toThrow(
      `operator "enrich" (map, id 1): parallelism must be an integer >= 1, got ${String(p === '2' ? '"2"' : p)}`,
    );
  });

  it('rejects empty names and uids', () => {
    expect(() => graphOf((env) => env.fromSource(fakeSource()).name(''))).toThrow(
      'invalid option name: operator "fake-source" (source, id 0): a name must be a non-empty string, got ""',
    );
    expect(() => graphOf((env) => env.fromSource(fakeSource(), '  '))).toThrow(InvalidOptionError);
    expect(() => graphOf((env) => env.fromSource(fakeSource()).uid(''))).toThrow(
      /a uid must be a non-empty string/,
    );
  });

  it('rejects a duplicate uid, naming both operators', () => {
    expect(() =>
      graphOf((env) => {
        const s = env.fromSource(fakeSource()).uid('x');
        s.map((v) => v).uid('x');
      }),
    ).toThrow(
      'uid "x" of operator "map" (map, id 1) is already used by operator "fake-source" (source, id 0)',
    );
  });

  it('rejects an explicit uid that a later operator gets by default', () => {
    expect(() =>
      graphOf((env) => {
        env
          .fromSource(fakeSource())
          .uid('map:map:0')
          .map((v) => v)
          .sinkTo(fakeSink());
      }),
    ).toThrow(
      'uid "map:map:0" is used by both operator "fake-source" (source, id 0) and operator "map" (map, id 1)',
    );
  });

  it('are rejected on streams that are no single operator output', () => {
    for (const make of [
      (s: import('../../../src/api/data-stream.js').DataStream<number>) => s.rebalance(),
      (s: import('../../../src/api/data-stream.js').DataStream<number>) => s.broadcast(),
      (s: import('../../../src/api/data-stream.js').DataStream<number>) => s.union(s),
    ]) {
      expect(() =>
        graphOf((env) => {
          make(env.fromSource(fakeSource<number>())).setParallelism(2);
        }),
      ).toThrow(InvalidGraphError);
    }
    expect(() => graphOf((env) => env.fromSource(fakeSource()).rebalance().name('x'))).toThrow(
      'name() configures the operator that produced the stream, but this stream comes from rebalance(), broadcast() or union(); call name() before those',
    );
  });
});

describe('the DESIGN.md §6 example', () => {
  it('type-checks and builds source -> map -> keyed-process -> sink', () => {
    const g = graphOf((env, args) => {
      env
        .fromSource(fakeSource<number>('sequence'), 'numbers')
        .map((n: number) => ({ key: n % 100, value: n }))
        .keyBy((r) => r.key)
        .process((r, ctx, out) => {
          const sum = ctx.state.value<number>('sum');
          sum.update((sum.value() ?? 0) + r.value);
          out.collect({ key: ctx.key, sum: sum.value(), n: args.n });
        })
        .sinkTo(fakeSink('sums'));
    });
    expect(g.nodes.map((n) => n.spec.kind)).toEqual(['source', 'map', 'keyed-process', 'sink']);
    expect(g.nodes[2].inputs.map((e) => e.partitioning)).toEqual(['hash']);
  });
});
