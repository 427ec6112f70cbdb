// The disk's own flush latency, without LMDB or weir: write 4 KiB and fdatasync, `n` times, either
// appending (the file grows, as the log's LMDB data file does: each flush also commits file-size
// metadata through the ext4 journal) or rewriting 16 blocks in place (no metadata change).
// An LMDB commit with fsync durability flushes twice (data pages, then the meta page), so its
// floor is about two of these.
//
//   node bench/log/fsync-probe.mjs [n=2000] [append|inplace] [dir=os.tmpdir()]
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const n = Number(process.argv[2] ?? 2000);
const mode = process.argv[3] ?? 'append';
if (!(Number.isInteger(n) && n > 0))
  throw new RangeError(`n must be a positive integer, got ${process.argv[2]}`);
if (mode !== 'append' && mode !== 'inplace')
  throw new RangeError(`mode must be append or inplace, got ${mode}`);
const path = join(process.argv[4] ?? tmpdir(), `weir-fsync-probe-${process.pid}`);
const fd = openSync(path, 'w');
const block = Buffer.alloc(4096, 7);
const ms = [];
try {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    writeSync(fd, block, 0, block.length, (mode === 'append' ? i : i % 16) * block.length);
    fdatasyncSync(fd);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
} finally {
  closeSync(fd);
  rmSync(path, { force: true });
}
ms.sort((a, b) => a - b);
const at = (q) => Number(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(2));
console.log(
  JSON.stringify({
    n,
    mode,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: Number(ms.at(-1).toFixed(2)),
  }),
);
