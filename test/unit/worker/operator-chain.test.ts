/**
 * OperatorChain's chained hops (outputs/chained-output.ts): the records in and out of every
 * operator stay exact (the task's metrics read them), the watchdog's running-operator word names
 * the operator that runs and is back at the head between records, and user-function failures keep
 * their error types and operator names.
 */
import { describe, expect, it } from 'vitest';
import type { DataStream } from '../../../src/api/data-stream.js';
import { buildStreamGraph, defineJob } from '../../../src/api/define-job.js';
import type { SinkContext } from '../../../src/api/source.js';
import { sequence } from '../../../src/connectors/sequence-source.js';
import { AsyncUserFunctionError } from '../../../src/errors.js';
import { buildExecutionPlan } from '../../../src/graph/build-execution-plan.js';
import { BusyMarker } from '../../../src/worker/busy-marker.js';
import { findVertex, OperatorChain } from '../../../src/worker/operator-chain.js';
import type { SourceOperator } from '../../../src/worker/operators/source-operator.js';
import { UserCodeError } from '../../../src/worker/operators/stream-operator.js';
import { TaskTime } from '../../../src/worker/timers/task-time.js';

/** The job's source vertex (source → `shape` → keyBy edge) with a network output that records. */
function sourceChain(n: number, shape: (s: DataStream<number>) => DataStream<unknown>, busy?: BusyMarker) {
  const def = defineJob((env) => {
    shape(env.fromSource(sequence({ from: 0, to: n }), 'numbers'))
      .keyBy((r) => String(r))
      .process((r, _ctx, out) => out.collect(r))
      .name('keyed')
      .sinkTo({ type: 'test', name: 'test', createWriter: () => ({ write() {} }) });
  });
  const plan = buildExecutionPlan(buildStreamGraph(def), { parallelism: 1 });
  const vertex = findVertex(plan, 0);
  const edgeId = vertex.operators[vertex.operators.length - 1].outputEdges[0];
  const emitted: unknown[] = [];
  const seenAt: number[] = [];
  const chain = new OperatorChain(vertex, {
    subtaskIndex: 0,
    parallelism: 1,
    attempt: 0,
    networkOutputs: new Map([
      [
        edgeId,
        {
          collect: (v: unknown) => {
            emitted.push(v);
            if (busy) seenAt.push(busy.operator);
          },
        },
      ],
    ]),
    networkWatermarkOutputs: new Map(),
    time: new TaskTime(),
    busy: busy ?? null,
    createKeyedBackend: () => {
      throw new Error('no keyed operator in the source chain');
    },
    restoredOperatorState: () => undefined,
    sinkContext: (): SinkContext => {
      throw new Error('no sink in the source chain');
    },
  });
  for (const op of chain.operators) op.open();
  const metrics = () =>
    chain.operators.map((op, i) => ({ name: op.name, in: op.recordsIn, out: chain.outputs[i].count }));
  return { chain, head: chain.head as SourceOperator, emitted, seenAt, metrics };
}

/** flatMap: `i % 4` records per input. */
function fanOut(i: number, _ctx: unknown, out: { collect(v: number): void }): void {
  for (let k = 0; k < i % 4; k++) out.collect(i * 10 + k);
}

describe('OperatorChain hops', () => {
  it('counts every operator’s records in and out exactly (map, filter)', () => {
    const { head, emitted, metrics } = sourceChain(1000, (s) =>
      s
        .map((i) => i * 3)
        .name('triple')
        .filter((i) => i % 2 === 0)
        .name('even'),
    );
    while (head.poll(64).state !== 'end');
    expect(metrics()).toEqual([
      { name: 'numbers', in: 0, out: 1000 },
      { name: 'triple', in: 1000, out: 1000 },
      { name: 'even', in: 1000, out: 500 },
    ]);
    expect(emitted).toEqual(Array.from({ length: 500 }, (_, k) => k * 6));
  });

  it('a flatMap that emits several records per input: out counts the emitted ones', () => {
    const { head, emitted, metrics } = sourceChain(300, (s) =>
      s
        .filter((i) => i % 3 !== 0)
        .name('skip thirds')
        .flatMap(fanOut)
        .name('fan')
        .map((x) => (x as number) + 1)
        .name('inc'),
    );
    while (head.poll(7).state !== 'end');
    let expected = 0;
    for (let i = 0; i < 300; i++) if (i % 3 !== 0) expected += i % 4;
    expect(metrics()).toEqual([
      { name: 'numbers', in: 0, out: 300 },
      { name: 'skip thirds', in: 300, out: 200 },
      { name: 'fan', in: 200, out: expected },
      { name: 'inc', in: expected, out: expected },
    ]);
    expect(emitted.length).toBe(expected);
  });

  it('a filter keeps records for truthy non-boolean results, as before', () => {
    const { head, emitted } = sourceChain(6, (s) =>
      s.filter((i) => (i % 2 === 0 ? 'yes' : 0) as unknown as boolean).name('truthy'),
    );
    while (head.poll(64).state !== 'end');
    expect(emitted).toEqual([0, 2, 4]);
  });

  it('the watchdog word names the running operator and is back at the head after each record', () => {
    const busy = new BusyMarker(new SharedArrayBuffer(256), 0);
    const inMap: number[] = [];
    const { head, seenAt } = sourceChain(
      5,
      (s) =>
        s
          .map((i) => {
            inMap.push(busy.operator);
            return i;
          })
          .name('m')
          .filter(() => true)
          .name('f'),
      busy,
    );
    while (head.poll(64).state !== 'end');
    expect(inMap).toEqual([1, 1, 1, 1, 1]);
    // the network output runs inside the last operator (index 2)
    expect(seenAt).toEqual([2, 2, 2, 2, 2]);
    expect(busy.operator).toBe(0);
  });

  it('user-function failures keep their types and name the operator', () => {
    const failing = sourceChain(5, (s) =>
      s
        .map((i) => {
          if (i === 3) throw new RangeError('bad three');
          return i;
        })
        .name('explode'),
    );
    let error: unknown;
    try {
      while (failing.head.poll(64).state !== 'end');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserCodeError);
    expect(error).toMatchObject({ operator: 'explode', message: 'bad three' });
    expect((error as UserCodeError).original).toBeInstanceOf(RangeError);
    expect(failing.metrics()[1]).toEqual({ name: 'explode', in: 4, out: 3 });

    const asyncFilter = sourceChain(5, (s) =>
      s.filter((async () => true) as unknown as (i: number) => boolean).name('async filter'),
    );
    let asyncError: unknown;
    try {
      asyncFilter.head.poll(64);
    } catch (e) {
      asyncError = e;
    }
    expect(asyncError).toBeInstanceOf(UserCodeError);
    expect((asyncError as UserCodeError).original).toBeInstanceOf(AsyncUserFunctionError);
    expect((asyncError as UserCodeError).original).toMatchObject({
      operator: 'async filter',
      functionKind: 'filter function',
    });
  });
});
