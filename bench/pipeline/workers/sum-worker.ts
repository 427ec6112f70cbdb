/**
 * Keyed running-sum worker of the worker-thread baseline: owns the keys its sources route to it,
 * applies the running sum to every record of every batch, hands the `{ key, sum }` outputs to a
 * LastSumSink (running-sum.ts),
 * and acknowledges consumed batches to the source (credits, see source-worker.ts). After every
 * source has sent `end`, it reports the digest of its sums to the main thread.
 */

import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { LastSumSink, RunningSum } from '../running-sum.js';
import { type DataMessage, type FromWorkerControl, type SumWorkerData, unreachable } from './messages.js';

function runSumWorker(data: SumWorkerData): void {
  const sum = new RunningSum();
  const sink = new LastSumSink();
  /** Source ports that have not sent `end` yet. */
  let open = data.ports.length;

  for (const port of data.ports as MessagePort[]) {
    let unacked = 0;
    port.on('message', (message: DataMessage) => {
      switch (message.kind) {
        case 'batch': {
          for (const record of message.records) sink.push(sum.apply(record));
          if (++unacked === data.ackEvery) {
            port.postMessage(unacked);
            unacked = 0;
          }
          return;
        }
        case 'end':
          port.close();
          if (--open === 0) {
            parentPort!.postMessage({
              kind: 'digest',
              digest: sink.digest(),
            } satisfies FromWorkerControl);
          }
          return;
        default:
          unreachable(message);
      }
    });
  }
  parentPort!.postMessage({ kind: 'ready' } satisfies FromWorkerControl);
}

runSumWorker(workerData as SumWorkerData);
