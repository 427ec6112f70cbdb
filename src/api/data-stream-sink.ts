/** `DataStreamSink`: what `sinkTo(...)` returns, to name and configure the sink operator. */

import type { CommittingSink } from './committing-sink.js';
import type { GraphBuilder } from './graph-builder.js';
import type { Sink } from './source.js';

/** The end of a branch: a sink operator. Configure it like any operator; nothing chains after it. */
export class DataStreamSink<T> {
  readonly #builder: GraphBuilder;
  readonly #id: number;
  /** The connector this operator writes to. */
  readonly sink: Sink<T> | CommittingSink<T, any>;

  /** @internal Created by `DataStream.sinkTo`. */
  constructor(builder: GraphBuilder, id: number, sink: Sink<T> | CommittingSink<T, any>) {
    this.#builder = builder;
    this.#id = id;
    this.sink = sink;
  }

  /** Sets the number of parallel sink subtasks (an integer >= 1). */
  setParallelism(parallelism: number): this {
    this.#builder.setParallelism(this.#id, parallelism);
    return this;
  }

  /** Names the sink operator, for plans, logs and errors (default `sink: <sink name>`). */
  name(name: string): this {
    this.#builder.setName(this.#id, name);
    return this;
  }

  /**
   * Sets the sink's stable identity. A transactional sink's pending transactions are restored
   * by uid, so set one on sinks of long-lived jobs. Must be unique within the job.
   */
  uid(uid: string): this {
    this.#builder.setUid(this.#id, uid);
    return this;
  }
}
