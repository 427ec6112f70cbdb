/**
 * Source worker of the worker-thread baseline: sequence split → map → filter, chained in one
 * thread, then hash-partitioned by key into batches, one postMessage per batch.
 *
 * Backpressure: per output port the worker holds `maxInFlight` credits; sending a batch takes
 * one, the sum worker's acks give them back. With no credit the loop awaits the next ack, which
 * also yields to the event loop (the only time acks are delivered). Memory is therefore bounded
 * by `maxInFlight × batchSize` records per channel, whatever the speed difference.
 */

import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { type KeyedRecord, keep, mapperFor } from '../pipeline-spec.js';
import { fnv1a } from '../sum-digest.js';
import {
  type AckMessage,
  type DataMessage,
  type FromWorkerControl,
  type SourceWorkerData,
  type ToSourceControl,
  unreachable,
} from './messages.js';

function runSourceWorker(data: SourceWorkerData): void {
  const ports = data.ports as MessagePort[];
  const partitions = ports.length;
  /** Batches each partition may still send before an ack; never negative. */
  const credits = ports.map(() => data.maxInFlight);
  /** Set while the loop is parked on a port without credit; resolved by that port's next ack. */
  let wake: (() => void) | undefined;

  ports.forEach((port, partition) => {
    port.on('message', (ack: AckMessage) => {
      credits[partition] += ack;
      const resume = wake;
      wake = undefined;
      resume?.();
    });
  });

  async function send(partition: number, message: DataMessage): Promise<void> {
    while (credits[partition] === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits[partition]--;
    ports[partition].postMessage(message);
  }

  async function produce(): Promise<void> {
    const toRecord = mapperFor(data.workload);
    const batches: KeyedRecord[][] = ports.map(() => []);
    for (let i = data.from; i < data.to; i++) {
      const record = toRecord(i);
      if (!keep(record)) continue;
      const partition = partitions === 1 ? 0 : fnv1a(record.key) % partitions;
      const batch = batches[partition];
      batch.push(record);
      if (batch.length === data.batchSize) {
        // Only await when out of credit: an await per batch would cost a microtask turn each.
        if (credits[partition] === 0) await send(partition, { kind: 'batch', records: batch });
        else {
          credits[partition]--;
          ports[partition].postMessage({ kind: 'batch', records: batch } satisfies DataMessage);
        }
        batches[partition] = [];
      }
    }
    for (let p = 0; p < partitions; p++) {
      if (batches[p].length > 0) await send(p, { kind: 'batch', records: batches[p] });
      // `end` is not credited by the consumer, so it must not wait for a credit either.
      ports[p].postMessage({ kind: 'end' } satisfies DataMessage);
    }
    // The ports stay open: the sum worker closes each one after reading its `end` (closing here
    // could race the delivery of the last messages).
  }

  parentPort!.on('message', (message: ToSourceControl) => {
    switch (message.kind) {
      case 'start':
        produce().catch((err: unknown) => {
          // Rethrown outside the promise so the worker fails with an 'error' event the main thread sees.
          setImmediate(() => {
            throw err;
          });
        });
        return;
      default:
        unreachable(message.kind);
    }
  });
  parentPort!.postMessage({ kind: 'ready' } satisfies FromWorkerControl);
}

runSourceWorker(workerData as SourceWorkerData);
