import { describe, expect, it } from 'vitest';
import type { DataStream } from '../../../src/api/data-stream.js';
import type { StreamEnvironment } from '../../../src/api/stream-environment.js';
import { isStatefulOperator, legacyUidOf } from '../../../src/graph/operator-uid.js';
import { graphOf } from './build-graph.js';
import { fakeSink, fakeSource } from './fake-connectors.js';

type Edit = (s: DataStream<number>) => DataStream<number>;

/** source → [stateless edits] → keyBy → process → [stateless edits] → sink */
function job(before: Edit[], after: Edit[]) {
  return (env: StreamEnvironment) => {
    let s = env.fromSource(fakeSource<number>(), 'numbers') as DataStream<number>;
    for (const e of before) s = e(s);
    let out = s
      .keyBy((x) => x % 3)
      .process((x: number, _ctx, o) => o.collect(x))
      .name('counts') as DataStream<number>;
    for (const e of after) out = e(out);
    out.sinkTo(fakeSink());
  };
}

const statefulUids = (build: (env: StreamEnvironment) => void) =>
  graphOf(build)
    .nodes.filter((n) => isStatefulOperator(n.spec))
    .map((n) => n.uid);

describe('default operator uids', () => {
  const filter: Edit = (s) => s.filter((x) => x > 0);
  const map: Edit = (s) => s.map((x) => x + 1);
  const flat: Edit = (s) => s.flatMap((x, _c, o) => o?.collect(x));
  const rebalance: Edit = (s) => s.rebalance().map((x) => x);

  it('are unchanged by inserting, removing and reordering stateless operators', () => {
    const base = statefulUids(job([], []));
    expect(base).toEqual(['source:numbers:0', 'keyed-process:counts:0', 'sink:sink: out:0']);
    for (const [before, after] of [
      [[filter], []],
      [[map, filter], [flat]],
      [
        [filter, map],
        [flat, rebalance],
      ],
      [[rebalance, flat, map, filter], []],
      [[], [map]],
    ] as [Edit[], Edit[]][]) {
      expect(statefulUids(job(before, after))).toEqual(base);
    }
  });

  it('positional (pre-scheme-2) uids of the same job shift with an insertion: what this replaces', () => {
    const legacy = (build: (env: StreamEnvironment) => void) =>
      graphOf(build)
        .nodes.filter((n) => n.spec.kind === 'keyed-process')
        .map((n) => legacyUidOf({ ...n, nodeId: n.id }));
    expect(legacy(job([], []))).toEqual(['keyed-process-1']);
    expect(legacy(job([filter], []))).toEqual(['keyed-process-2']);
  });

  it('count operators of the same kind and name (explicit ones too: setting a uid shifts no other); an explicit uid is kept and marked', () => {
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'numbers');
      const b = env.fromSource(fakeSource<number>(), 'numbers').uid('second');
      const c = env.fromSource(fakeSource<number>(), 'numbers');
      a.union(b, c).sinkTo(fakeSink());
    });
    expect(g.nodes.map((n) => [n.uid, n.explicitUid ?? false])).toEqual([
      ['source:numbers:0', false],
      ['second', true],
      ['source:numbers:2', false],
      ['sink:sink: out:0', false],
    ]);
  });

  it('a keyed connect is stateful and has its own uid kind; an unkeyed one is stateless', () => {
    const g = graphOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'a');
      const b = env.fromSource(fakeSource<number>(), 'b');
      a.connect(b)
        .process({ processElement1: (x, _c, o) => o.collect(x), processElement2: (x, _c, o) => o.collect(x) })
        .sinkTo(fakeSink());
      a.connect(b)
        .keyBy(
          (x) => x,
          (x) => x,
        )
        .process({ processElement1: (x, _c, o) => o.collect(x), processElement2: (x, _c, o) => o.collect(x) })
        .sinkTo(fakeSink());
    });
    const co = g.nodes.filter((n) => n.spec.kind === 'co-process');
    expect(co.map((n) => [n.uid.split(':')[0], isStatefulOperator(n.spec)])).toEqual([
      ['co-process', false],
      ['keyed-co-process', true],
    ]);
  });
});
