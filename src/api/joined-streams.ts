/**
 * Window join (Flink's `JoinedStreams`): `a.join(b).where(k1).equalTo(k2).window(w).apply(fn)`
 * emits `fn(left, right)` for every pair of elements with equal keys in the same window. It runs
 * as a two-input window operator: both sides are kept in the window's state until it fires.
 */

import { DataStream } from './data-stream.js';
import type { KeySelector } from './functions.js';
import { type Bivariant, repartitioned, requireFunction, type StreamCore } from './graph-builder.js';
import { addWindowNode, requireAssigner } from './windowed-stream.js';
import type { WindowAssigner } from './windows.js';

export class JoinedStreams<L, R> {
  readonly #left: StreamCore;
  readonly #right: StreamCore;
  /** @internal Created by `DataStream.join`. */
  constructor(left: StreamCore, right: StreamCore) {
    this.#left = left;
    this.#right = right;
  }

  /** The key of left elements. */
  where<K>(leftKey: Bivariant<KeySelector<L, K>>): {
    equalTo(rightKey: KeySelector<R, K>): JoinWhereEqual<L, R, K>;
  } {
    requireFunction(leftKey, 'join(...).where()');
    return {
      equalTo: (rightKey) => {
        requireFunction(rightKey, 'join(...).where(...).equalTo()');
        return new JoinWhereEqual<L, R, K>(this.#left, this.#right, leftKey, rightKey);
      },
    };
  }
}

export class JoinWhereEqual<L, R, K> {
  /** Typed `any`: function-typed fields would make `L`/`R` contravariant (see KeyedStream). */
  readonly #parts: JoinParts;
  /** @internal */
  constructor(left: StreamCore, right: StreamCore, leftKey: KeySelector<L, K>, rightKey: KeySelector<R, K>) {
    this.#parts = { left, right, leftKey, rightKey };
  }

  window(assigner: WindowAssigner): WindowedJoin<L, R> {
    return new WindowedJoin<L, R>(this.#parts, requireAssigner(assigner, 'join(...).window()'));
  }
}

interface JoinParts {
  readonly left: StreamCore;
  readonly right: StreamCore;
  readonly leftKey: KeySelector<any, any>;
  readonly rightKey: KeySelector<any, any>;
}

export class WindowedJoin<L, R> {
  readonly #join: JoinParts;
  readonly #assigner: WindowAssigner;
  /** @internal */
  constructor(join: JoinParts, assigner: WindowAssigner) {
    this.#join = join;
    this.#assigner = assigner;
  }

  /** `fn(left, right)` for every pair of one key and window; its result is emitted. */
  apply<OUT>(fn: Bivariant<(left: L, right: R) => OUT>): DataStream<OUT> {
    requireFunction(fn, 'join(...).window(...).apply()');
    const { left, right, leftKey, rightKey } = this.#join;
    const keyed = (core: StreamCore, k: KeySelector<any, any>): StreamCore => ({
      builder: core.builder,
      inputs: core.inputs.map((i) => repartitioned(i, 'hash', k)),
      operatorId: undefined,
    });
    const core = addWindowNode(
      keyed(left, leftKey),
      keyed(right, rightKey).inputs,
      {
        assigner: this.#assigner,
        keySelectors: [leftKey, rightKey],
        allowedLateness: 0,
        lateDataTag: undefined,
      },
      { kind: 'join', fn },
      'window-join',
    );
    return new DataStream<OUT>(core);
  }
}
