/**
 * The message vocabulary of the worker-thread baseline (closed unions keyed on `kind`).
 *
 * Data plane, one MessageChannel per (source worker, sum worker) pair:
 *   source → sum: `batch` (≤ batchSize records, structured-cloned) … then one `end`;
 *   sum → source: a bare number = how many batches were consumed since the last ack (credits).
 * Control plane, over each worker's parentPort:
 *   worker → main: `ready` once its listeners are installed; a sum worker sends `digest` after
 *   the `end` of every source; main → source: `start`.
 */

import type { MessagePort } from 'node:worker_threads';
import type { KeyedRecord, Workload } from '../pipeline-spec.js';
import type { SumDigest } from '../sum-digest.js';

export type DataMessage =
  | { readonly kind: 'batch'; readonly records: readonly KeyedRecord[] }
  | { readonly kind: 'end' };

/** Credits returned to the source: batches consumed since the previous ack. */
export type AckMessage = number;

export type ToSourceControl = { readonly kind: 'start' };

export type FromWorkerControl =
  | { readonly kind: 'ready' }
  | { readonly kind: 'digest'; readonly digest: SumDigest };

export interface SourceWorkerData {
  /** File URL of the .ts worker module, read by `load-ts.mjs`. */
  readonly entry: string;
  /** This source's split of the sequence: [from, to). */
  readonly from: number;
  readonly to: number;
  readonly batchSize: number;
  /** Which `map` the source runs (pipeline-spec.ts). */
  readonly workload: Workload;
  /** Batches a source may have sent to one sum worker and not yet seen acknowledged. */
  readonly maxInFlight: number;
  /** One port per sum worker, index = partition. */
  readonly ports: readonly MessagePort[];
}

export interface SumWorkerData {
  readonly entry: string;
  /** Send an ack after this many batches (≤ maxInFlight, or the source would stall). */
  readonly ackEvery: number;
  /** One port per source worker. */
  readonly ports: readonly MessagePort[];
}

export function unreachable(value: never): never {
  throw new TypeError(`unexpected message ${JSON.stringify(value)}`);
}
