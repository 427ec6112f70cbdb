/**
 * Benchmark worker: one end of a channel under test. The same two workers serve every mode, so
 * every mode crosses the same pair of threads.
 *
 * Timing: the producer stamps its start and the consumer its end with
 * `performance.timeOrigin + performance.now()`, which is comparable across threads of a process.
 */
import { type MessagePort, parentPort } from 'node:worker_threads';
import { ChannelWriter } from '../../src/channels/channel-writer.js';
import { InputGate } from '../../src/channels/input-gate.js';

export type BenchCommand =
  | {
      readonly cmd: 'produce-ring';
      readonly ring: SharedArrayBuffer;
      readonly doorbell: SharedArrayBuffer;
      readonly n: number;
      readonly batchRecords: number;
      /** false: every batch through msgpack (no shape codec). */
      readonly shapeBatches: boolean;
    }
  | {
      readonly cmd: 'consume-ring';
      readonly ring: SharedArrayBuffer;
      readonly doorbell: SharedArrayBuffer;
      readonly n: number;
      readonly spinMicros: number;
    }
  | { readonly cmd: 'produce-port'; readonly port: MessagePort; readonly n: number; readonly batch: number }
  | { readonly cmd: 'consume-port'; readonly port: MessagePort; readonly n: number };

export interface BenchRecord {
  readonly key: string;
  readonly value: number;
}

const now = (): number => performance.timeOrigin + performance.now();

function produceRing(command: Extract<BenchCommand, { cmd: 'produce-ring' }>): Record<string, unknown> {
  const writer = new ChannelWriter(command.ring, command.doorbell, {
    batchRecords: command.batchRecords,
    shapeBatches: command.shapeBatches,
  });
  const start = now();
  for (let i = 0; i < command.n; i++) {
    writer.write({ key: `k${i % 10000}`, value: i * 2 });
    if (writer.backlogged) writer.waitForCapacitySync();
  }
  writer.writeControl({ kind: 'end-of-partition' });
  while (!writer.flush()) writer.waitForCapacitySync();
  writer.close();
  return {
    start,
    doorbellRings: writer.doorbell.stats.rings,
    doorbellNotifies: writer.doorbell.stats.notifies,
    writerParks: writer.ring.stats.writerParks,
    frames: writer.stats.framesPublished,
    bytes: writer.stats.bytesPublished,
  };
}

function consumeRing(command: Extract<BenchCommand, { cmd: 'consume-ring' }>): Record<string, unknown> {
  const gate = new InputGate([command.ring], command.doorbell, { spinMicros: command.spinMicros });
  let count = 0;
  let sum = 0;
  while (!gate.allEnded) {
    const next = gate.pollNext();
    if (next === null) {
      gate.waitSync();
      continue;
    }
    if (next.frame.kind !== 'records') continue;
    const records = next.frame.records as readonly BenchRecord[];
    for (let i = 0; i < records.length; i++) sum += records[i].value;
    count += records.length;
  }
  const end = now();
  return {
    end,
    count,
    sum,
    consumerParks: gate.doorbell.stats.parks,
    writerNotifies: gate.channels[0].ring!.stats.writerNotifies,
  };
}

function producePort(command: Extract<BenchCommand, { cmd: 'produce-port' }>): Record<string, unknown> {
  const { port, n, batch } = command;
  const start = now();
  if (batch === 1) {
    for (let i = 0; i < n; i++) port.postMessage({ key: `k${i % 10000}`, value: i * 2 });
  } else {
    let records: BenchRecord[] = [];
    for (let i = 0; i < n; i++) {
      records.push({ key: `k${i % 10000}`, value: i * 2 });
      if (records.length === batch) {
        port.postMessage(records);
        records = [];
      }
    }
    if (records.length > 0) port.postMessage(records);
  }
  port.close();
  return { start };
}

function consumePort(
  command: Extract<BenchCommand, { cmd: 'consume-port' }>,
): Promise<Record<string, unknown>> {
  const { port, n } = command;
  let count = 0;
  let sum = 0;
  return new Promise((resolve) => {
    port.on('message', (data: BenchRecord | BenchRecord[]) => {
      if (Array.isArray(data)) {
        for (let i = 0; i < data.length; i++) sum += data[i].value;
        count += data.length;
      } else {
        sum += data.value;
        count++;
      }
      if (count === n) {
        const end = now();
        port.close();
        resolve({ end, count, sum });
      }
    });
  });
}

async function run(command: BenchCommand): Promise<Record<string, unknown>> {
  switch (command.cmd) {
    case 'produce-ring':
      return produceRing(command);
    case 'consume-ring':
      return consumeRing(command);
    case 'produce-port':
      return producePort(command);
    case 'consume-port':
      return consumePort(command);
  }
}

parentPort!.on('message', (message: { id: number; command: BenchCommand }) => {
  run(message.command).then(
    (result) => parentPort!.postMessage({ id: message.id, ok: true, result }),
    (error: Error) => parentPort!.postMessage({ id: message.id, ok: false, error: String(error.stack) }),
  );
});
