import { describe, expect, it } from 'vitest';
import { InvalidGraphError, InvalidOptionError } from '../../../src/errors.js';
import { buildExecutionPlan } from '../../../src/graph/build-execution-plan.js';
import type { OperatorSpec, StreamEdge, StreamGraph, StreamNode } from '../../../src/graph/stream-graph.js';
import { graphOf, planOf, vertexNames } from './build-graph.js';
import { fakeSink, fakeSource } from './fake-connectors.js';

describe('chaining', () => {
  it('chains forward edges of equal parallelism into one vertex (map -> filter)', () => {
    const plan = planOf((env) => {
      env
        .fromSource(fakeSource(), 'numbers')
        .map((n) => n)
        .filter(() => true)
        .sinkTo(fakeSink('out'));
    });
    expect(vertexNames(plan)).toEqual(['numbers -> map -> filter -> sink: out']);
    expect(plan.edges).toEqual([]);
    const [v] = plan.vertices;
    expect(v.parallelism).toBe(2);
    expect(v.maxParallelism).toBe(128);
    expect(v.operators.map((o) => [o.nodeId, o.chainedOutputs, o.outputEdges])).toEqual([
      [0, [1], []],
      [1, [2], []],
      [2, [3], []],
      [3, [], []],
    ]);
  });

  it('keyBy breaks the chain with a hash edge', () => {
    const selector = (n: number) => n;
    const plan = planOf((env) => {
      env
        .fromSource(fakeSource<number>(), 'numbers')
        .map((n) => n)
        .keyBy(selector)
        .process(() => {})
        .sinkTo(fakeSink('sums'));
    });
    expect(vertexNames(plan)).toEqual(['numbers -> map', 'keyed-process -> sink: sums']);
    expect(plan.edges).toEqual([
      {
        edgeId: 0,
        sourceVertexId: 0,
        sourceNodeId: 1,
        targetVertexId: 1,
        targetNodeId: 2,
        inputIndex: 0,
        partitioning: 'hash',
        keySelector: selector,
      },
    ]);
    expect(plan.vertices[0].outputEdges).toEqual([0]);
    expect(plan.vertices[0].operators[1].outputEdges).toEqual([0]);
    expect(plan.vertices[1].inputEdges).toEqual([0]);
  });

  it('a parallelism change breaks the chain and turns forward into rebalance', () => {
    const plan = planOf(
      (env) => {
        env
          .fromSource(fakeSource(), 'numbers')
          .setParallelism(1)
          .map((n) => n)
          .sinkTo(fakeSink());
      },
      { parallelism: 4 },
    );
    expect(vertexNames(plan)).toEqual(['numbers', 'map -> sink: out']);
    expect(plan.vertices.map((v) => v.parallelism)).toEqual([1, 4]);
    expect(plan.edges.map((e) => e.partitioning)).toEqual(['rebalance']);
    expect(plan.edges[0].keySelector).toBeUndefined();
  });

  it('an explicit rebalance or broadcast breaks the chain even at equal parallelism', () => {
    const plan = planOf((env) => {
      const s = env.fromSource(fakeSource(), 's');
      s.rebalance().sinkTo(fakeSink('a'));
      s.broadcast().sinkTo(fakeSink('b'));
    });
    expect(vertexNames(plan)).toEqual(['s', 'sink: a', 'sink: b']);
    expect(plan.edges.map((e) => [e.targetVertexId, e.partitioning])).toEqual([
      [1, 'rebalance'],
      [2, 'broadcast'],
    ]);
  });

  it('a union consumer is a head even when every input is forward', () => {
    const plan = planOf((env) => {
      const a = env.fromSource(fakeSource(), 'a');
      const b = env.fromSource(fakeSource(), 'b');
      a.union(b)
        .map((x) => x)
        .name('merged')
        .sinkTo(fakeSink());
    });
    expect(vertexNames(plan)).toEqual(['a', 'b', 'merged -> sink: out']);
    expect(plan.edges.map((e) => [e.sourceVertexId, e.targetVertexId, e.partitioning, e.inputIndex])).toEqual(
      [
        [0, 2, 'forward', 0],
        [1, 2, 'forward', 0],
      ],
    );
    expect(plan.vertices[2].inputEdges).toEqual([0, 1]);
  });

  it('a two-input operator is a head; edges keep their input index', () => {
    const plan = planOf((env) => {
      const a = env.fromSource(fakeSource(), 'a');
      const b = env.fromSource(fakeSource(), 'b');
      a.connect(b)
        .process({ processElement1() {}, processElement2() {} })
        .sinkTo(fakeSink());
    });
    expect(vertexNames(plan)).toEqual(['a', 'b', 'co-process -> sink: out']);
    expect(plan.edges.map((e) => [e.sourceVertexId, e.inputIndex])).toEqual([
      [0, 0],
      [1, 1],
    ]);
  });

  it('chains are trees: a fan-out to forward successors stays in one vertex', () => {
    const plan = planOf((env) => {
      const s = env.fromSource(fakeSource(), 's');
      s.map((x) => x)
        .name('left')
        .sinkTo(fakeSink('l'));
      s.filter(() => true)
        .name('right')
        .sinkTo(fakeSink('r'));
    });
    expect(plan.vertices).toHaveLength(1);
    expect(plan.vertices[0].name).toBe('s -> left -> sink: l -> right -> sink: r');
    expect(plan.vertices[0].operators.map((o) => [o.name, o.chainedOutputs])).toEqual([
      ['s', [1, 3]],
      ['left', [2]],
      ['sink: l', []],
      ['right', [4]],
      ['sink: r', []],
    ]);
  });

  it('a source is always a head, and a sink chains like any operator', () => {
    const plan = planOf((env) => {
      env.fromSource(fakeSource(), 's').sinkTo(fakeSink());
    });
    expect(vertexNames(plan)).toEqual(['s -> sink: out']);
  });

  it('numbers vertices and edges by index, heads in topological order', () => {
    const plan = planOf((env) => {
      const a = env.fromSource(fakeSource<number>(), 'a');
      const b = env.fromSource(fakeSource<number>(), 'b');
      const keyed = a.keyBy((n) => n).process(() => {});
      keyed.union(b.rebalance()).sinkTo(fakeSink());
    });
    plan.vertices.forEach((v, i) => {
      expect(v.vertexId).toBe(i);
    });
    plan.edges.forEach((e, i) => {
      expect(e.edgeId).toBe(i);
    });
    expect(vertexNames(plan)).toEqual(['a', 'b', 'keyed-process', 'sink: out']);
    expect(plan.edges.map((e) => [e.sourceVertexId, e.targetVertexId, e.partitioning])).toEqual([
      [0, 2, 'hash'],
      [2, 3, 'forward'],
      [1, 3, 'rebalance'],
    ]);
  });

  it('uses the job maxParallelism on every vertex', () => {
    const plan = planOf((env) => env.fromSource(fakeSource()).sinkTo(fakeSink()), {
      parallelism: 3,
      maxParallelism: 7,
    });
    expect(plan.maxParallelism).toBe(7);
    expect(plan.vertices[0].maxParallelism).toBe(7);
  });
});

describe('validation', () => {
  const ok = graphOf((env) => env.fromSource(fakeSource()).sinkTo(fakeSink()));

  it.each([0, -1, 2.5, Number.NaN])('rejects job parallelism %s', (parallelism) => {
    expect(() => buildExecutionPlan(ok, { parallelism })).toThrow(InvalidOptionError);
    expect(() => buildExecutionPlan(ok, { parallelism })).toThrow(
      `invalid option parallelism: must be an integer >= 1, got ${parallelism}`,
    );
  });

  it.each([0, 32769, 1.5])('rejects maxParallelism %s', (maxParallelism) => {
    expect(() => buildExecutionPlan(ok, { parallelism: 1, maxParallelism })).toThrow(
      `invalid option maxParallelism: must be an integer in [1, 32768], got ${maxParallelism}`,
    );
  });

  it('accepts the maxParallelism bounds', () => {
    expect(buildExecutionPlan(ok, { parallelism: 1, maxParallelism: 1 }).maxParallelism).toBe(1);
    expect(buildExecutionPlan(ok, { parallelism: 1, maxParallelism: 32768 }).maxParallelism).toBe(32768);
  });

  it('rejects a keyed operator with parallelism above maxParallelism, naming it', () => {
    const keyed = graphOf((env) => {
      env
        .fromSource(fakeSource<number>())
        .setParallelism(1)
        .keyBy((n) => n)
        .sum()
        .name('totals')
        .sinkTo(fakeSink())
        .setParallelism(1);
    });
    expect(() => buildExecutionPlan(keyed, { parallelism: 9, maxParallelism: 8 })).toThrow(
      'operator "totals" (keyed-reduce, id 1) is keyed and has parallelism 9, above maxParallelism 8',
    );
    expect(buildExecutionPlan(keyed, { parallelism: 8, maxParallelism: 8 }).vertices[1].parallelism).toBe(8);
  });

  it('lets non-keyed operators exceed maxParallelism', () => {
    expect(buildExecutionPlan(ok, { parallelism: 9, maxParallelism: 8 }).vertices[0].parallelism).toBe(9);
  });

  it('rejects a job without a sink', () => {
    const g = graphOf((env) => {
      env.fromSource(fakeSource());
    });
    expect(() => buildExecutionPlan(g, { parallelism: 1 })).toThrow(InvalidGraphError);
    expect(() => buildExecutionPlan(g, { parallelism: 1 })).toThrow(
      'the job has no sink: end every branch with .sinkTo(...)',
    );
  });

  it('rejects an empty job', () => {
    expect(() =>
      buildExecutionPlan(
        graphOf(() => {}),
        { parallelism: 1 },
      ),
    ).toThrow('the job graph is empty: the build function added no operators');
  });

  it('rejects an operator whose output goes nowhere, naming it', () => {
    const g = graphOf((env) => {
      const s = env.fromSource(fakeSource());
      s.sinkTo(fakeSink());
      s.map((x) => x).name('forgotten');
    });
    expect(() => buildExecutionPlan(g, { parallelism: 1 })).toThrow(
      'the output of operator "forgotten" (map, id 2) goes nowhere: end the branch with .sinkTo(...)',
    );
  });

  // The fluent API cannot build the graphs below; the runtime must still reject them.
  const source = (id: number): StreamNode => node(id, { kind: 'source', source: fakeSource() }, []);
  const sink = (id: number, inputs: StreamEdge[]): StreamNode =>
    node(id, { kind: 'sink', sink: fakeSink() }, inputs);
  const map = (id: number, inputs: StreamEdge[], parallelism?: number): StreamNode =>
    node(id, { kind: 'map', fn: (x: unknown) => x }, inputs, parallelism);
  function node(id: number, spec: OperatorSpec, inputs: StreamEdge[], parallelism?: number): StreamNode {
    return { id, name: `n${id}`, uid: `u${id}`, parallelism, spec, inputs };
  }
  function edge(
    sourceId: number,
    targetId: number,
    partitioning: StreamEdge['partitioning'] = 'forward',
  ): StreamEdge {
    return { sourceId, targetId, inputIndex: 0, partitioning };
  }

  it('rejects a cycle, naming the operators on it', () => {
    const g: StreamGraph = {
      nodes: [source(0), map(1, [edge(0, 1), edge(2, 1)]), map(2, [edge(1, 2)]), sink(3, [edge(2, 3)])],
    };
    expect(() => buildExecutionPlan(g, { parallelism: 1 })).toThrow(
      'the job graph has a cycle through operators "n1" (id 1), "n2" (id 2)',
    );
  });

  it('rejects a hand-built node parallelism below 1', () => {
    const g: StreamGraph = { nodes: [source(0), map(1, [edge(0, 1)], 0), sink(2, [edge(1, 2)])] };
    expect(() => buildExecutionPlan(g, { parallelism: 1 })).toThrow(
      'operator "n1" (map, id 1) has parallelism 0; it must be an integer >= 1',
    );
  });

  it('rejects edges to unknown nodes, duplicate ids and duplicate uids', () => {
    expect(() =>
      buildExecutionPlan({ nodes: [source(0), sink(1, [edge(5, 1)])] }, { parallelism: 1 }),
    ).toThrow('operator "n1" (sink, id 1) consumes node 5, which does not exist');
    expect(() => buildExecutionPlan({ nodes: [source(0), source(0)] }, { parallelism: 1 })).toThrow(
      /has the same id as/,
    );
    const twin = { ...source(1), uid: 'u0' };
    expect(() => buildExecutionPlan({ nodes: [source(0), twin] }, { parallelism: 1 })).toThrow(
      'uid "u0" is used by both operator "n0" (source, id 0) and operator "n1" (source, id 1)',
    );
  });

  it('rejects a source with inputs, a non-source without, and a sink with outputs', () => {
    const withInput = { ...source(1), inputs: [edge(0, 1)] };
    expect(() => buildExecutionPlan({ nodes: [source(0), withInput] }, { parallelism: 1 })).toThrow(
      'operator "n1" (source, id 1) is a source but has inputs',
    );
    expect(() => buildExecutionPlan({ nodes: [source(0), map(1, [])] }, { parallelism: 1 })).toThrow(
      'operator "n1" (map, id 1) has no inputs (only sources may have none)',
    );
    expect(() =>
      buildExecutionPlan(
        { nodes: [source(0), sink(1, [edge(0, 1)]), sink(2, [edge(1, 2)])] },
        { parallelism: 1 },
      ),
    ).toThrow('operator "n1" (sink, id 1) is a sink but has outputs');
  });

  it('rejects a keyed operator fed by a non-hash edge and a hash edge without selector', () => {
    const keyed = node(1, { kind: 'keyed-reduce', fn: (a: unknown) => a, keySelector: (x: unknown) => x }, [
      edge(0, 1, 'rebalance'),
    ]);
    expect(() =>
      buildExecutionPlan({ nodes: [source(0), keyed, sink(2, [edge(1, 2)])] }, { parallelism: 1 }),
    ).toThrow(
      `operator "n1" (keyed-reduce, id 1) is keyed but its input from operator "n0" (source, id 0) is 'rebalance', not 'hash' (keyBy)`,
    );
    expect(() =>
      buildExecutionPlan(
        { nodes: [source(0), map(1, [edge(0, 1, 'hash')]), sink(2, [edge(1, 2)])] },
        { parallelism: 1 },
      ),
    ).toThrow('the hash-partitioned edge 0 -> 1 into operator "n1" (map, id 1) has no key selector');
  });

  it('rejects a two-input operator missing an input, and input 1 on a one-input operator', () => {
    const co = node(1, { kind: 'co-process', fn: { processElement1() {}, processElement2() {} } }, [
      edge(0, 1),
    ]);
    expect(() =>
      buildExecutionPlan({ nodes: [source(0), co, sink(2, [edge(1, 2)])] }, { parallelism: 1 }),
    ).toThrow('operator "n1" (co-process, id 1) is a two-input operator but lacks input 1');
    const second = { ...edge(0, 1), inputIndex: 1 as const };
    expect(() =>
      buildExecutionPlan({ nodes: [source(0), map(1, [second]), sink(2, [edge(1, 2)])] }, { parallelism: 1 }),
    ).toThrow('operator "n1" (map, id 1) has an input with index 1; only two-input operators have input 1');
  });
});
