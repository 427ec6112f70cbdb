/**
 * `StreamEnvironment`: what a job's build function receives; the entry point of the graph.
 *
 * One environment per build. It owns the graph under construction, including the node-id counter:
 * there is no module-level state, so importing the job module in the main thread and in every
 * worker and building it with the same args yields the same graph with the same ids.
 */

import { DataStream } from './data-stream.js';
import { GraphBuilder, operatorOutput, show } from './graph-builder.js';
import type { Source } from './source.js';

export class StreamEnvironment {
  readonly #builder: GraphBuilder;

  /** @internal Environments are created by the runtime (see `buildStreamGraph`), one per build. */
  constructor(builder: GraphBuilder = new GraphBuilder()) {
    this.#builder = builder;
  }

  /**
   * Starts a stream that reads from `source`. `name` names the source operator in plans, logs
   * and errors (default: the connector type, e.g. `sequence`). A source is always the head of its
   * task; it runs at the job's parallelism unless `setParallelism` says otherwise.
   */
  fromSource<T>(source: Source<T>, name?: string): DataStream<T> {
    if (typeof source !== 'object' || source === null || typeof source.createReader !== 'function') {
      throw new TypeError(
        `fromSource(): expected a source (an object with createReader), got ${show(source)}`,
      );
    }
    const id = this.#builder.addNode({ kind: 'source', source: source as Source<unknown> }, source.type, []);
    if (name !== undefined) this.#builder.setName(id, name);
    return new DataStream<T>(operatorOutput(this.#builder, id));
  }
}
