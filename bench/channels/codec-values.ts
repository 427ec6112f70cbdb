/**
 * Record codec micro-benchmark (tinybench, one thread): encode + decode of one 256-record batch,
 * for the shape codec's fast path (`{ key, value }`, numbers) and for the msgpack path (records
 * with an array field). Written to check that value fidelity on the msgpack path (-0, Set,
 * functions rejected: record-codec.ts) does not slow down either path; pass another checkout's
 * `src/channels/record-codec.ts` to compare in the same run.
 *
 * Run: node --import tsx bench/channels/codec-values.ts [PATH/TO/record-codec.ts ...]
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';

type Codec = {
  encodeBatch(r: readonly unknown[]): Uint8Array;
  takeStructureUpdate(): Uint8Array | null;
  applyStructureUpdate(p: Uint8Array): void;
  decodeBatch(p: Uint8Array): unknown[];
};
type CodecClass = new (o?: { shapeBatches?: boolean }) => Codec;

const BATCH = 256;
const shapeBatch = Array.from({ length: BATCH }, (_, i) => ({ key: `k${i % 37}`, value: i * 1.5 }));
const msgpackBatch = Array.from({ length: BATCH }, (_, i) => ({ key: `k${i % 37}`, tags: [i, i + 1] }));

const paths = process.argv.slice(2);
const modules =
  paths.length > 0 ? paths : [new URL('../../src/channels/record-codec.ts', import.meta.url).pathname];
const bench = new Bench({ time: 1500, warmupTime: 300 });
for (const [m, path] of modules.entries()) {
  const { RecordCodec } = (await import(pathToFileURL(path).href)) as { RecordCodec: CodecClass };
  for (const [name, batch] of [
    ['shape', shapeBatch],
    ['msgpack', msgpackBatch],
  ] as const) {
    const producer = new RecordCodec();
    const consumer = new RecordCodec();
    producer.encodeBatch(batch);
    const update = producer.takeStructureUpdate();
    if (update) consumer.applyStructureUpdate(new Uint8Array(update));
    bench.add(`#${m} ${name} encode+decode ${BATCH}`, () => {
      const bytes = producer.encodeBatch(batch);
      if (consumer.decodeBatch(bytes).length !== BATCH) throw new Error('lost records');
    });
  }
}
await bench.run();
console.log(
  `node ${process.version}, ${os.cpus()[0]?.model} × ${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}`,
);
for (const [m, path] of modules.entries()) console.log(`#${m}: ${path}`);
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'ns/record (median)':
      t.result.state === 'completed'
        ? Number(((t.result.latency.p50 * 1e6) / BATCH).toFixed(1))
        : t.result.state,
    'rme %': t.result.state === 'completed' ? Number(t.result.latency.rme.toFixed(1)) : '',
  })),
);
