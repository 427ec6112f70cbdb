/**
 * The contract between the pipeline runner and one implementation of the pipeline (a baseline or
 * a weir configuration). Adding an implementation = writing one function that returns a
 * {@link PipelineCase}; see `run.ts` for where it is pushed.
 */

export interface PipelineResult {
  /** Source records processed: always the `n` that was asked for. */
  readonly records: number;
  /** Timed milliseconds: from the first source record to the last sink record (set-up excluded). */
  readonly ms: number;
  /** `checksumOf(digest)` of the final per-key sums; must equal the single-thread loop's. */
  readonly checksum: string;
  /** Untimed set-up the case did before the clock started (worker start-up, module load), if any. */
  readonly setupMs?: number;
  /** Whole-job wall time including set-up and teardown (weir cases: `startJob` to `done`). */
  readonly jobMs?: number;
  /** Checkpoints completed in the run, the final one included (weir cases with checkpointing). */
  readonly checkpoints?: number;
}

export interface PipelineCase {
  /** Unique, short, used in the table and the JSON (e.g. `node:stream`, `weir p=2 EO 1s`). */
  readonly name: string;
  /** Runs the whole pipeline over `sequence(0..n)`; must leave no threads or handles behind. */
  run(n: number): Promise<PipelineResult>;
}
