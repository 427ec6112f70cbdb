/**
 * Key-group chunk encoding micro-benchmark (tinybench, one thread): `encodeKeyGroupChunk` of one
 * section of 10 000 `{ sum, count }` values, per entry. Written to measure what keeping -0 and
 * Maps in state costs (the `encodeValue` walk, msgpack-values.ts); pass another checkout's
 * `src/state/key-group-chunk.ts` first to compare in the same run.
 *
 * Run: node --import tsx bench/state/chunk-encode-values.ts [BASELINE/src/state/key-group-chunk.ts]
 */
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { Packr } from 'msgpackr';
import { Bench } from 'tinybench';

type Encode = (
  p: Packr,
  g: number,
  kind: 'full',
  id: number,
  base: undefined,
  s: unknown[],
  op?: string,
) => unknown;

const ENTRIES = 10_000;
const upserts: unknown[] = [];
for (let i = 0; i < ENTRIES; i++) upserts.push(`k${i}`, { sum: i * 3, count: i }, 0);
const sections = [['sum', 'value', upserts, []]];

const paths = [
  ...process.argv.slice(2),
  new URL('../../src/state/key-group-chunk.ts', import.meta.url).pathname,
];
const bench = new Bench({ time: 2000, warmupTime: 300 });
for (const [m, path] of paths.entries()) {
  const { encodeKeyGroupChunk } = (await import(pathToFileURL(path).href)) as { encodeKeyGroupChunk: Encode };
  const packr = new Packr({ useRecords: false, useBigIntExtension: true, moreTypes: true });
  bench.add(`#${m} encodeKeyGroupChunk`, () =>
    encodeKeyGroupChunk(packr, 1, 'full', 1, undefined, sections, 'op'),
  );
}
await bench.run();
console.log(
  `node ${process.version}, ${os.cpus()[0]?.model} × ${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}`,
);
for (const [m, path] of paths.entries()) console.log(`#${m}: ${path}`);
console.table(
  bench.tasks.map((t) => ({
    task: t.name,
    'ns/entry (median)':
      t.result.state === 'completed'
        ? Number(((t.result.latency.p50 * 1e6) / ENTRIES).toFixed(1))
        : t.result.state,
    'rme %': t.result.state === 'completed' ? Number(t.result.latency.rme.toFixed(1)) : '',
  })),
);
