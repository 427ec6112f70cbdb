// Issue 14 (lmdbpin14): does a long-lived LMDB read transaction make the write-backs and reads
// that run beside it dearer? A model of the lmdb backend's keyed task, without the runtime:
// an environment opened as LmdbKeyedStateBackend opens it, N keys of the backend's key shape
// (13 bytes) and ~16-byte values, then rounds of one write-back (128 random puts in one
// transactionSync) plus 128 random uncached reads, with, between rounds, SLICE entries of a
// full scan (the snapshot). Modes:
//   none   no scan
//   long   the scan holds one read transaction from its start to its end (the snapshot before lmdbpin14)
//   sliced the scan renews its read transaction every SLICE entries (no long-lived reader, as now)
// Printed per mode: µs per round of state access (scan time excluded), minor/major page faults
// of the process, data file size and LMDB's last page number at the end.
// Usage: node bench/state/lmdb-pin.mjs KEYS ROUNDS [modes]
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';

const N = Number(process.argv[2] ?? 1e6);
const ROUNDS = Number(process.argv[3] ?? 20000);
const modes = (process.argv[4] ?? 'none,long,sliced,none,long,sliced').split(',');
const SLICE = 1024;
const BATCH = 128;

const faults = () => {
  const f = readFileSync('/proc/self/stat', 'utf8');
  const s = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return [Number(s[7]), Number(s[9])]; // fields 10 minflt, 12 majflt
};
const keyOf = (i) => {
  const b = Buffer.allocUnsafe(13);
  b.writeUInt16BE(i % 128, 0);
  b.writeUInt16BE(0, 2);
  b[4] = 1;
  b.writeDoubleBE(i, 5);
  return b;
};
let seed = 12345;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % N;
};

function run(mode) {
  const path = mkdtempSync(join(tmpdir(), 'weir-pin-'));
  const db = open({
    path,
    encoding: 'binary',
    keyEncoding: 'binary',
    noSync: true,
    noMetaSync: true,
    overlappingSync: false,
    compression: false,
    cache: false,
    useWritemap: true,
  });
  const val = Buffer.alloc(16, 7);
  for (let s = 0; s < N; s += 100000)
    db.transactionSync(() => {
      for (let i = s; i < Math.min(N, s + 100000); i++) db.putSync(keyOf(i), val);
    });
  const size0 = statSync(join(path, 'data.mdb')).size;
  const last0 = db.getStats().lastPageNumber;
  let txn;
  let iter;
  let scans = 0;
  let scanned = 0;
  let scanNs = 0n;
  let accessNs = 0n;
  const f0 = faults();
  const nextIter = () => {
    txn = db.useReadTransaction();
    return db.getRange({ transaction: txn, start: Buffer.from([0]) })[Symbol.iterator]();
  };
  if (mode !== 'none') iter = nextIter();
  let sink = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    db.transactionSync(() => {
      for (let i = 0; i < BATCH; i++) {
        val[0] = r;
        db.putSync(keyOf(rnd()), val);
      }
    });
    for (let i = 0; i < BATCH; i++) sink += db.getBinaryFast(keyOf(rnd()))?.length ?? 0;
    const t1 = process.hrtime.bigint();
    accessNs += t1 - t0;
    if (mode === 'none') continue;
    for (let i = 0; i < SLICE; i++) {
      const n = iter.next();
      if (n.done) {
        txn.done();
        scans++;
        iter = nextIter();
        break;
      }
      sink += n.value.value.length;
      scanned++;
    }
    if (mode === 'sliced') {
      // Renew the view: a real sliced scan would restart from the last key in a new transaction.
      iter.return?.();
      txn.done();
      const at = scanned % N;
      txn = db.useReadTransaction();
      iter = db.getRange({ transaction: txn, start: keyOf(at) })[Symbol.iterator]();
    }
    scanNs += process.hrtime.bigint() - t1;
  }
  const f1 = faults();
  if (txn) txn.done();
  const st = db.getStats();
  const size1 = statSync(join(path, 'data.mdb')).size;
  console.log(
    JSON.stringify({
      mode,
      keys: N,
      rounds: ROUNDS,
      accessUsPerRound: Number(accessNs / BigInt(ROUNDS)) / 1000,
      scanUsPerRound: Number(scanNs / BigInt(ROUNDS)) / 1000,
      fullScans: scans,
      minflt: f1[0] - f0[0],
      majflt: f1[1] - f0[1],
      fileMiB: [+(size0 / 2 ** 20).toFixed(1), +(size1 / 2 ** 20).toFixed(1)],
      lastPage: [last0, st.lastPageNumber],
      sink: sink > 0,
    }),
  );
  db.close();
  rmSync(path, { recursive: true, force: true });
}
for (const m of modes) run(m);
