import { describe, expect, it } from 'vitest';
import { OutputTag } from '../../../src/api/output-tag.js';
import { windows } from '../../../src/api/windows.js';
import { InvalidGraphError, InvalidOptionError } from '../../../src/errors.js';
import { graphOf, planOf } from '../graph/build-graph.js';
import { fakeSink, fakeSource } from '../graph/fake-connectors.js';

interface E {
  k: number;
  t: number;
}

describe('keyed process with timers', () => {
  it('accepts the plain function and the { processElement, onTimer } object form', () => {
    const processElement = () => {};
    const onTimer = () => {};
    const g = graphOf((env) => {
      const keyed = env.fromSource(fakeSource<E>(), 's').keyBy((e) => e.k);
      keyed.process(processElement).sinkTo(fakeSink('a'));
      keyed.process({ processElement, onTimer }).sinkTo(fakeSink('b'));
    });
    const specs = g.nodes.filter((n) => n.spec.kind === 'keyed-process').map((n) => n.spec);
    expect(specs).toEqual([
      expect.objectContaining({ fn: processElement }),
      expect.objectContaining({ fn: processElement, onTimer }),
    ]);
    expect('onTimer' in specs[0]).toBe(false);
  });

  it('rejects an object without processElement or with a non-function onTimer', () => {
    const build = (fn: unknown) => () =>
      graphOf((env) => {
        env
          .fromSource(fakeSource<E>(), 's')
          .keyBy((e) => e.k)
          .process(fn as never)
          .sinkTo(fakeSink('a'));
      });
    expect(build({ onTimer: () => {} })).toThrow(/processElement/);
    expect(build({ processElement: () => {}, onTimer: 5 })).toThrow(/onTimer/);
  });

  it('connect(...).process onTimer needs keyed inputs', () => {
    expect(() =>
      graphOf((env) => {
        const a = env.fromSource(fakeSource<E>(), 'a');
        const b = env.fromSource(fakeSource<E>(), 'b');
        a.connect(b)
          .process({ processElement1() {}, processElement2() {}, onTimer() {} } as never)
          .sinkTo(fakeSink('x'));
      }),
    ).toThrow(InvalidGraphError);
  });
});

describe('windows in the graph', () => {
  it('window(...).reduce adds one keyed window node; its output edges are timestamped', () => {
    const plan = planOf((env) => {
      env
        .fromSource(fakeSource<E>(), 's')
        .assignTimestampsAndWatermarks({ timestamp: (e) => e.t, maxOutOfOrderness: 5 })
        .keyBy((e) => e.k)
        .window(windows.tumbling({ size: 10 }))
        .allowedLateness(3)
        .reduce((a) => a)
        .rebalance()
        .sinkTo(fakeSink('out'));
    });
    const w = plan.vertices.find((v) => v.name.startsWith('window-reduce'))!;
    expect(w.operators[0].spec).toMatchObject({
      kind: 'window',
      allowedLateness: 3,
      function: { kind: 'reduce' },
    });
    expect(plan.edges.every((e) => e.timestamped)).toBe(true);
  });

  it('late data side output: wired by tag, chained when forward at equal parallelism', () => {
    const tag = new OutputTag<E>('late');
    const plan = planOf((env) => {
      const result = env
        .fromSource(fakeSource<E>(), 's')
        .assignTimestampsAndWatermarks({ timestamp: (e) => e.t, maxOutOfOrderness: 5 })
        .keyBy((e) => e.k)
        .window(windows.tumbling({ size: 10 }))
        .sideOutputLateData(tag)
        .process((els, _ctx, out) => out.collect(els.length));
      result.sinkTo(fakeSink('main'));
      result
        .getSideOutput(tag)
        .map((e) => e.k)
        .sinkTo(fakeSink('late'));
    });
    const v = plan.vertices.find((x) => x.name.startsWith('window-process'))!;
    const op = v.operators[0];
    const names = new Map(v.operators.map((o) => [o.nodeId, o.name]));
    expect(op.chainedOutputs.map((id) => names.get(id))).toEqual(['sink: main']);
    expect(op.sideOutputs).toEqual([{ tag: 'late', chainedOutputs: [expect.any(Number)], outputEdges: [] }]);
    expect(names.get(op.sideOutputs![0].chainedOutputs[0])).toBe('map');
  });

  it('getSideOutput rejects a tag the operator does not declare', () => {
    expect(() =>
      graphOf((env) => {
        const s = env.fromSource(fakeSource<E>(), 's').map((e) => e);
        s.getSideOutput(new OutputTag('late')).sinkTo(fakeSink('x'));
      }),
    ).toThrow(/no side output "late"/);
  });

  it('checks window options up front', () => {
    const windowed =
      (assigner: ReturnType<typeof windows.tumbling>) =>
      (env: Parameters<Parameters<typeof graphOf>[0]>[0]) =>
        env
          .fromSource(fakeSource<E>(), 's')
          .keyBy((e) => e.k)
          .window(assigner);
    expect(() =>
      graphOf((env) => void windowed(windows.tumbling({ size: 10 }))(env).allowedLateness(-1)),
    ).toThrow(InvalidOptionError);
    expect(() =>
      graphOf(
        (env) => void windowed(windows.tumbling({ size: 10, time: 'processing' }))(env).allowedLateness(5),
      ),
    ).toThrow(/processing-time/);
    expect(() =>
      graphOf(
        (env) =>
          void windowed(windows.session({ gap: 10 }))(env).aggregate({
            createAccumulator: () => 0,
            add: (_e, a) => a,
            getResult: (a) => a,
          }),
      ),
    ).toThrow(/merge/);
    expect(() => graphOf((env) => void windowed({} as never)(env))).toThrow(/window assigner/);
    expect(() => new OutputTag('')).toThrow(InvalidOptionError);
  });
});

describe('joins in the graph', () => {
  it('interval join and window join are keyed two-input nodes', () => {
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<E>(), 'a');
      const b = env.fromSource(fakeSource<E>(), 'b');
      a.keyBy((e) => e.k)
        .intervalJoin(b.keyBy((e) => e.k))
        .between(-1, 2)
        .process((l, r, _ctx, out) => out.collect([l, r]))
        .sinkTo(fakeSink('i'));
      a.join(b)
        .where((e) => e.k)
        .equalTo((e) => e.k)
        .window(windows.tumbling({ size: 10 }))
        .apply((l, r) => [l, r])
        .sinkTo(fakeSink('w'));
    });
    for (const kind of ['interval-join', 'window']) {
      const n = g.nodes.find((x) => x.spec.kind === kind)!;
      expect(n.inputs.map((e) => [e.partitioning, e.inputIndex])).toEqual([
        ['hash', 0],
        ['hash', 1],
      ]);
    }
  });

  it('between checks its bounds', () => {
    const build = (lower: number, upper: number) => () =>
      graphOf((env) => {
        const a = env.fromSource(fakeSource<E>(), 'a').keyBy((e) => e.k);
        const b = env.fromSource(fakeSource<E>(), 'b').keyBy((e) => e.k);
        a.intervalJoin(b).between(lower, upper);
      });
    expect(build(5, 1)).toThrow(/lower/);
    expect(build(Number.NaN, 1)).toThrow(InvalidOptionError);
  });
});
