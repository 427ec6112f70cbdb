/**
 * Keyed state backends (heap and lmdb, same run): the synchronous pause at the barrier
 * (`snapshot()`: copy-on-write for heap; the pending writes packed + a read transaction for
 * lmdb) and the asynchronous serialization, for 10k / 100k / 1M keys, against a naive
 * stop-the-world deep copy measured in the same run; delta vs full bytes when 1% of the keys
 * changed; and read-modify-write throughput.
 *
 *   node --import tsx bench/state/sync-pause.ts [--quick | --smoke] [--backend heap|lmdb] [--json PATH]
 *
 * Prints a table and writes bench/results/state.json (state-quick.json with --quick,
 * state-smoke.json with --smoke; or PATH), with the machine and the Node version.
 * `--quick` runs 10k and 100k keys only, with fewer repetitions; `--smoke` 10k keys, 3 reps.
 * Before each timed barrier, 1% of the keys (at most 1000) are updated, so the lmdb pause includes
 * realistic pending writes (packed at the barrier, not written).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyValue } from '../../src/state/copy-value.js';
import { HeapKeyedStateBackend } from '../../src/state/heap/heap-keyed-state-backend.js';
import type { KeyedStateBackend } from '../../src/state/keyed-state-backend.js';
import { LmdbKeyedStateBackend } from '../../src/state/lmdb/lmdb-keyed-state-backend.js';
import { formatMachineInfo, machineInfo } from '../harness/machine-info.js';
import { commandLine, type SuiteReport } from '../harness/suite-report.js';

const quick = process.argv.includes('--quick');
const smoke = process.argv.includes('--smoke');
const SIZES = smoke ? [10_000] : quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000];
const REPS = smoke ? 3 : quick ? 5 : 11;
const MAX_P = 128;
const backendArg = process.argv[process.argv.indexOf('--backend') + 1];
const BACKENDS: Backend[] =
  process.argv.includes('--backend') && (backendArg === 'heap' || backendArg === 'lmdb')
    ? [backendArg]
    : ['heap', 'lmdb'];

type Backend = 'heap' | 'lmdb';

interface Row {
  backend: Backend;
  keys: number;
  readModifyWritePerSec: number;
  syncPauseMedianMs: number;
  syncPauseMaxMs: number;
  naiveDeepCopyMedianMs: number;
  asyncSerializeMs: number;
  medianSerializeSliceMs: number;
  longestSerializeSliceMs: number;
  fullBytes: number;
  deltaBytes1pct: number;
  deltaOverFull: number;
  /** Heap: copy-on-write copies while a snapshot is live. Lmdb: 0 (the view is an LMDB read transaction). */
  cowCopiesAfter1pctTouch: number;
}

const ms = (ns: bigint) => Number(ns) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function build(keys: number, backend: Backend): KeyedStateBackend {
  const options = { maxParallelism: MAX_P, keyGroupRange: { start: 0, end: MAX_P - 1 }, incremental: true };
  const b = backend === 'heap' ? new HeapKeyedStateBackend(options) : new LmdbKeyedStateBackend(options);
  const s = b.value<{ count: number; sum: number; tag: string }>('agg');
  for (let k = 0; k < keys; k++) {
    b.setCurrentKey(k);
    s.update({ count: 1, sum: k, tag: `t${k % 97}` });
  }
  return b;
}

/** Read-modify-write of every key once (value() then update()), per second. */
function readModifyWrite(b: KeyedStateBackend, keys: number): number {
  const s = b.value<{ count: number; sum: number; tag: string }>('agg');
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < keys; k++) {
    b.setCurrentKey(k);
    const v = s.value()!;
    s.update({ count: v.count + 1, sum: v.sum, tag: v.tag });
  }
  return keys / (ms(process.hrtime.bigint() - t0) / 1000);
}

function touch(b: KeyedStateBackend, keys: number, offset: number): void {
  const s = b.value<{ count: number; sum: number; tag: string }>('agg');
  const n = Math.min(1000, Math.max(1, Math.floor(keys / 100)));
  const step = Math.floor(keys / n);
  for (let i = 0; i < n; i++) {
    b.setCurrentKey((i * step + offset) % keys);
    const v = s.value()!;
    s.update({ count: v.count + 1, sum: v.sum, tag: v.tag });
  }
}

const copiesOf = (b: KeyedStateBackend) => (b instanceof HeapKeyedStateBackend ? b.counters.valuesCopied : 0);

/**
 * The baseline: what a snapshot costs without copy-on-write: deep-copy every entry at the
 * barrier, synchronously. Reads the state through the backend's public surface (keys + handle),
 * as an operator-level "stop the world and clone" would.
 */
function naiveDeepCopy(b: KeyedStateBackend): number {
  const s = b.value<object>('agg');
  const t0 = process.hrtime.bigint();
  const copy = new Map<unknown, unknown>();
  for (const k of b.keys('agg')) {
    b.setCurrentKey(k);
    copy.set(k, copyValue(s.value()));
  }
  const dt = ms(process.hrtime.bigint() - t0);
  if (copy.size === 0) throw new Error('nothing copied');
  return dt;
}

async function measure(keys: number, backend: Backend): Promise<Row> {
  const b = build(keys, backend);
  const s = b.value<{ count: number; sum: number }>('agg');
  const rmw = readModifyWrite(b, keys);

  // 1. Sync pause: snapshot() alone after 1% of keys (<= 1000) changed, released right away.
  const pauses: number[] = [];
  let cp = 1;
  for (let i = 0; i < REPS; i++) {
    touch(b, keys, i);
    const t0 = process.hrtime.bigint();
    const snap = b.snapshot(cp++);
    pauses.push(ms(process.hrtime.bigint() - t0));
    snap.release();
  }

  // 2. Naive stop-the-world deep copy (the baseline), same state, same run.
  const naive: number[] = [];
  for (let i = 0; i < Math.min(REPS, keys >= 1_000_000 ? 3 : REPS); i++) naive.push(naiveDeepCopy(b));

  // 3. Async serialization (full), with the longest synchronous slice between yields.
  const snap = b.snapshot(cp++);
  const t0 = process.hrtime.bigint();
  let last = t0;
  const slices: number[] = [];
  // Slices between event-loop turns: a timer ticking every turn measures them from outside.
  let ticking = true;
  const tick = () => {
    const now = process.hrtime.bigint();
    slices.push(ms(now - last));
    last = now;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const serialized = await snap.encode('full');
  ticking = false;
  if (serialized.chunks.some((c) => c.bytes.length === 0)) throw new Error('empty chunk');
  const serializeMs = ms(process.hrtime.bigint() - t0);
  if (slices.length === 0) slices.push(serializeMs);
  snap.release();
  b.notifyCheckpointComplete(snap.checkpointId);

  // 4. 1% of keys changed since the confirmed checkpoint: delta vs full bytes, and the
  //    copy-on-write copies paid while a snapshot is live.
  const changed = Math.max(1, Math.floor(keys / 100));
  const step = Math.floor(keys / changed);
  for (let i = 0; i < changed; i++) {
    b.setCurrentKey(i * step);
    s.value()!.count++;
  }
  const snap2 = b.snapshot(cp++);
  const copiesBefore = copiesOf(b);
  for (let i = 0; i < changed; i++) {
    b.setCurrentKey(i * step + 1);
    s.value()!.count++;
  }
  const cowCopies = copiesOf(b) - copiesBefore;
  const delta = await snap2.encode('delta');
  const full = await snap2.encode('full');
  snap2.release();
  await b.close();

  return {
    backend,
    keys,
    readModifyWritePerSec: rmw,
    syncPauseMedianMs: median(pauses),
    syncPauseMaxMs: Math.max(...pauses),
    naiveDeepCopyMedianMs: median(naive),
    asyncSerializeMs: serializeMs,
    medianSerializeSliceMs: median(slices),
    longestSerializeSliceMs: Math.max(...slices),
    fullBytes: full.metadata.bytes,
    deltaBytes1pct: delta.metadata.bytes,
    deltaOverFull: delta.metadata.bytes / full.metadata.bytes,
    cowCopiesAfter1pctTouch: cowCopies,
  };
}

const rows: Row[] = [];
for (const n of SIZES) {
  for (const backend of BACKENDS) {
    rows.push(await measure(n, backend));
    globalThis.gc?.();
  }
}

const fmt = (x: number, d = 3) => x.toFixed(d);
console.log(
  `keyed state (${BACKENDS.join(' vs ')}), one value state of {count,sum,tag} objects, maxParallelism ${MAX_P}, ` +
    `Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown cpu'} x${os.cpus().length}`,
);
console.table(
  rows.map((r) => ({
    backend: r.backend,
    keys: r.keys.toLocaleString('en-US'),
    'rmw (k/s)': Math.round(r.readModifyWritePerSec / 1000),
    'sync pause median (ms)': fmt(r.syncPauseMedianMs, 4),
    'sync pause max (ms)': fmt(r.syncPauseMaxMs, 4),
    'naive deep copy (ms)': fmt(r.naiveDeepCopyMedianMs, 1),
    'async serialize (ms)': fmt(r.asyncSerializeMs, 1),
    'slice median/max (ms)': `${fmt(r.medianSerializeSliceMs, 2)} / ${fmt(r.longestSerializeSliceMs, 1)}`,
    'full (KiB)': Math.round(r.fullBytes / 1024),
    'delta 1% (KiB)': Math.round(r.deltaBytes1pct / 1024),
    'delta/full': fmt(r.deltaOverFull, 4),
  })),
);

const jsonArg = process.argv.indexOf('--json');
const out =
  jsonArg === -1
    ? join(
        dirname(fileURLToPath(import.meta.url)),
        '..',
        'results',
        smoke ? 'state-smoke.json' : quick ? 'state-quick.json' : 'state.json',
      )
    : resolve(process.argv[jsonArg + 1]);
const report: SuiteReport = {
  suite: 'state',
  title: `state: keyed state backends (${BACKENDS.join(', ')}), sync pause at the barrier vs a naive deep copy`,
  command: commandLine('bench/state/sync-pause.ts'),
  machine: formatMachineInfo(machineInfo()),
  notes: [`${REPS} barriers per size; goal: sync pause ≤ 2 ms at 1 M keys.`],
  tables: [
    {
      title: 'per backend and state size',
      rows: rows.map((r) => ({
        backend: r.backend,
        keys: r.keys,
        'rmw k/s': Math.round(r.readModifyWritePerSec / 1000),
        'sync pause median ms': fmt(r.syncPauseMedianMs, 4),
        'sync pause max ms': fmt(r.syncPauseMaxMs, 4),
        'naive deep copy ms': fmt(r.naiveDeepCopyMedianMs, 1),
        'async serialize ms': fmt(r.asyncSerializeMs, 1),
        'full KiB': Math.round(r.fullBytes / 1024),
        'delta 1% KiB': Math.round(r.deltaBytes1pct / 1024),
      })),
    },
  ],
  charts: [
    {
      title: 'sync pause max (ms) per backend and state size; goal ≤ 2 ms at 1 M keys',
      unit: ' ms',
      bars: rows.map((r) => ({
        label: `${r.backend}, ${r.keys.toLocaleString('en-US')} keys`,
        value: r.syncPauseMaxMs,
      })),
      reference: { value: 2, label: 'goal 2 ms' },
    },
  ],
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      benchmark: 'state/sync-pause',
      date: new Date().toISOString(),
      quick,
      smoke,
      backends: BACKENDS,
      machine: {
        cpu: os.cpus()[0]?.model,
        cores: os.cpus().length,
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
        node: process.version,
      },
      baseline: 'naive stop-the-world deep copy of every entry at the barrier (same state, same run)',
      goal: 'sync pause <= 2 ms at 1M keys',
      rows,
      report,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
