/**
 * A full snapshot's encoding cost per entry, in one thread, for several builds in the same run:
 * fills a heap keyed state backend (`<root>/dist/state/heap/heap-keyed-state-backend.js`) with N
 * keys 'k0'..'k{N-1}' of one value state, takes one snapshot and times a full `encode()` of it
 * (every key group's chunk: table walk, msgpack, copy, CRC), REPS times per child process. Each
 * (size, value shape, round) runs every root in its own child process, roots alternated
 * (A, B, A, B, …) so that load swings hit them alike; the table gives, per root, the best and the
 * median over all encodes of ns per entry, and the median per-round ratio to the first root with
 * its spread; the same for process CPU time (user + system, all threads: less sensitive than wall
 * time to other processes on a loaded machine).
 *
 *   node bench/state/full-snapshot-encode.mjs [--keys 50000,500000] [--values number,object]
 *        [--rounds 6] [--reps 5] [--together] [--json PATH] ROOT...
 *
 * `--together`: each round is one child process holding every root's backend, encodes alternated
 * A, B, A, B, … a few ms apart: on a loaded machine, far less spread than a process per root.
 * The backends are filled in turn, and the later-filled one's heap layout differs: odd rounds
 * fill them in reverse order, so look at the per-round ratios, not only their median.
 *
 * Value shapes: `number` (k * 1.5, a float64 like the keyed-sum job's sums; every 7th an integer),
 * `object` ({ sum, count, tag }). maxParallelism 128, range 0..127 (all key groups).
 * Each child collects garbage (--expose-gc) before each timed encode. Writes JSON to PATH when given.
 */

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};

/** A heap backend of `root`'s build holding `keys` keys of one value state (`number` or `object` values). */
async function filledBackend(root, keys, shape) {
  const { HeapKeyedStateBackend } = await import(
    pathToFileURL(resolve(root, 'dist/state/heap/heap-keyed-state-backend.js')).href
  );
  const b = new HeapKeyedStateBackend({ maxParallelism: 128, keyGroupRange: { start: 0, end: 127 } });
  const s = b.value('v');
  for (let k = 0; k < keys; k++) {
    b.setCurrentKey(`k${k}`);
    s.update(
      shape === 'number' ? (k % 7 === 0 ? k : k * 1.5) : { sum: k * 1.5, count: k, tag: `t${k % 97}` },
    );
  }
  return b;
}

if (argv[0] === '--child') {
  const [, root, keysArg, shape, repsArg] = argv;
  const keys = Number(keysArg);
  const reps = Number(repsArg);
  const snap = (await filledBackend(root, keys, shape)).snapshot(1);
  const out = [];
  const cpu = [];
  let bytes = 0;
  for (let r = 0; r < reps + 1; r++) {
    globalThis.gc?.(); // the previous encode's chunks are garbage: collect them outside the timing
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const enc = await snap.encode('full');
    const ns = Number(process.hrtime.bigint() - t0);
    const c = process.cpuUsage(c0);
    bytes = enc.metadata.bytes;
    if (enc.metadata.entries !== keys)
      throw new Error(`encoded ${enc.metadata.entries} entries, expected ${keys}`);
    if (r > 0) {
      // The first encode warms up (JIT).
      out.push(ns / keys);
      cpu.push((1000 * (c.user + c.system)) / keys);
    }
  }
  snap.release();
  process.stdout.write(JSON.stringify({ nsPerEntry: out, cpuNsPerEntry: cpu, bytes }));
  process.exit(0);
}

if (argv[0] === '--child-together') {
  // Every root in this one process, encodes alternated A, B, A, B, … (a few ms apart).
  const [, keysArg, shape, repsArg, ...rootArgs] = argv;
  const keys = Number(keysArg);
  const reps = Number(repsArg);
  const snaps = [];
  for (const root of rootArgs) {
    snaps.push((await filledBackend(root, keys, shape)).snapshot(1));
  }
  const out = snaps.map(() => ({ nsPerEntry: [], cpuNsPerEntry: [], bytes: 0 }));
  for (let r = 0; r < reps + 1; r++) {
    const order = snaps.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) {
      globalThis.gc?.();
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const enc = await snaps[i].encode('full');
      const ns = Number(process.hrtime.bigint() - t0);
      const c = process.cpuUsage(c0);
      if (enc.metadata.entries !== keys)
        throw new Error(`encoded ${enc.metadata.entries} entries, expected ${keys}`);
      out[i].bytes = enc.metadata.bytes;
      if (r > 0) {
        out[i].nsPerEntry.push(ns / keys);
        out[i].cpuNsPerEntry.push((1000 * (c.user + c.system)) / keys);
      }
    }
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

const together = argv.includes('--together');
if (together) argv.splice(argv.indexOf('--together'), 1);
const sizes = opt('keys', '50000,500000').split(',').map(Number);
const shapes = opt('values', 'number,object').split(',');
const rounds = Number(opt('rounds', '6'));
const reps = Number(opt('reps', '5'));
const jsonPath = opt('json', undefined);
const roots = argv.map((r) => resolve(r));
if (roots.length === 0) {
  console.error('usage: node bench/state/full-snapshot-encode.mjs [options] ROOT...');
  process.exit(2);
}
const self = fileURLToPath(import.meta.url);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const load0 = os.loadavg()[0];
const rows = [];
for (const keys of sizes) {
  for (const shape of shapes) {
    const per = roots.map(() => ({ all: [], roundMedians: [], cpu: [], cpuRoundMedians: [], bytes: 0 }));
    for (let round = 0; round < rounds; round++) {
      // Alternate the order too, so neither root always runs first in a round.
      const order = roots.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      // Together: odd rounds fill the backends in reverse order (the later-filled one's layout differs).
      const fillOrder = round % 2 === 1 ? [...order] : roots.map((_, i) => i);
      const filled = together
        ? JSON.parse(
            execFileSync(
              process.execPath,
              [
                '--expose-gc',
                self,
                '--child-together',
                String(keys),
                shape,
                String(reps),
                ...fillOrder.map((i) => roots[i]),
              ],
              { encoding: 'utf8', maxBuffer: 1 << 20 },
            ),
          )
        : undefined;
      const results = filled && roots.map((_, i) => filled[fillOrder.indexOf(i)]);
      for (const i of order) {
        const r =
          results?.[i] ??
          JSON.parse(
            execFileSync(
              process.execPath,
              ['--expose-gc', self, '--child', roots[i], String(keys), shape, String(reps)],
              {
                encoding: 'utf8',
                maxBuffer: 1 << 20,
              },
            ),
          );
        per[i].all.push(...r.nsPerEntry);
        per[i].roundMedians.push(median(r.nsPerEntry));
        per[i].cpu.push(...r.cpuNsPerEntry);
        per[i].cpuRoundMedians.push(median(r.cpuNsPerEntry));
        per[i].bytes = r.bytes;
      }
    }
    for (const [i, p] of per.entries()) {
      const ratios = p.roundMedians.map((m, r) => m / per[0].roundMedians[r]);
      const cpuRatios = p.cpuRoundMedians.map((m, r) => m / per[0].cpuRoundMedians[r]);
      rows.push({
        keys,
        values: shape,
        root: i,
        'best ns/entry': Number(Math.min(...p.all).toFixed(1)),
        'median ns/entry': Number(median(p.all).toFixed(1)),
        'ratio to #0 (median)': Number(median(ratios).toFixed(3)),
        'ratio min–max': `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`,
        'cpu median ns/entry': Number(median(p.cpu).toFixed(1)),
        'cpu ratio (median)': Number(median(cpuRatios).toFixed(3)),
        'cpu ratio min–max': `${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)}`,
        bytes: p.bytes,
      });
    }
  }
}
console.log(
  `node ${process.version}, ${os.cpus()[0]?.model} × ${os.cpus().length}, load ${load0.toFixed(1)} → ${os
    .loadavg()[0]
    .toFixed(1)}, ${rounds} rounds × ${reps} encodes, ${new Date().toISOString()}`,
);
for (const [i, r] of roots.entries()) console.log(`#${i}: ${r}`);
console.table(rows);
if (jsonPath !== undefined)
  writeFileSync(jsonPath, `${JSON.stringify({ roots, rounds, reps, rows }, null, 2)}\n`);
