/**
 * Checks an LMDB `data.mdb` against its own meta pages with plain file reads, before lmdb-js
 * memory-maps it. A file shorter than the pages its newest meta page says are in use (a
 * truncated copy, a partial restore from backup) would otherwise kill the whole process with
 * SIGBUS on the first read past the end of the file: no error, no catch, no cleanup.
 *
 * Layout read here (LMDB 0.9 as bundled by lmdb-js 3, 64-bit; checked against a file written by
 * it): pages 0 and 1 are meta pages. A page starts with a 24-byte header (`pgno` u64, `txnid`
 * u64, `pad` u16, `flags` u16 at byte 18, bounds u32); the meta follows it: `magic` u32 at 24
 * (0xBEEFC0DE), `version` u32 at 28 (2), `address` u64, `mapsize` u64 at 40, two 48-byte
 * `MDB_db` records at 48 (the first one's `md_pad` u32 at 48 is the page size), `last_pg` u64 at
 * 144, `txnid` u64 at 152. LMDB uses the valid meta page with the higher `txnid`.
 *
 * A healthy file can be shorter than `last_pg` says: LMDB may free pages it allocated at the end
 * of the file within the same transaction ("loose" pages) without ever writing them. Those pages
 * are free, so LMDB never reads them. So when the file is short, this walks every page reachable
 * from the newest meta page (the free-page tree, the main tree, every named sub-database, overflow
 * runs) and refuses only when one of them lies beyond the end of the file. Tree pages: `flags`
 * at 18 (branch 0x01, leaf 0x02, overflow 0x04 with its page count u32 at 20), `lower` u16 at 20
 * (node count = lower / 2), node offsets u16 from byte 24, a node at 24 + offset: data size / child
 * page number in its first 6 bytes, `flags` u16 at 4 (bigdata 0x01, sub-database 0x02), key size
 * u16 at 6, key then data from 8; a sub-database's data is an `MDB_db` whose root is at 40.
 *
 * Cost: two reads of 160 bytes per open; a walk of the reachable pages only when the file is
 * shorter than `last_pg` says (never seen in a healthy file here, but LMDB allows it).
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { CheckpointFileDamagedError } from '../../errors.js';

const META_BYTES = 160;
const PAGE_HEADER = 24;
const NODE_HEADER = 8;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const P_INVALID = 0xffffffffffffffffn;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;

export interface LmdbMeta {
  readonly pageSize: number;
  readonly lastPage: number;
  readonly txnId: bigint;
  readonly mapSize: number;
  /** Root pages of the free-page tree and the main tree (P_INVALID when empty). */
  readonly roots: readonly bigint[];
}

/** The meta record of one meta page, or why it is not a valid one. */
export function parseMetaPage(page: Uint8Array): LmdbMeta | string {
  if (page.byteLength < META_BYTES) return `meta page of ${page.byteLength} bytes (needs ${META_BYTES})`;
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  if ((view.getUint16(18, true) & P_META) === 0) return 'not a meta page';
  if (view.getUint32(24, true) !== MDB_MAGIC) return 'no LMDB magic number';
  const version = view.getUint32(28, true) & 0xffff;
  if (version !== MDB_DATA_VERSION) return `LMDB data version ${version}, expected ${MDB_DATA_VERSION}`;
  const pageSize = view.getUint32(48, true);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return `page size ${pageSize}`;
  return {
    pageSize,
    lastPage: Number(view.getBigUint64(144, true)),
    txnId: view.getBigUint64(152, true),
    mapSize: Number(view.getBigUint64(40, true)),
    roots: [view.getBigUint64(88, true), view.getBigUint64(136, true)],
  };
}

/**
 * Walks every page reachable from `roots` and returns the first problem: a page beyond
 * `filePages`, or a page that is not what its parent says. `readPage(pgno)` returns the page's
 * bytes (only ever called for pages inside the file). O(reachable pages).
 */
export function reachablePagesProblem(
  roots: readonly bigint[],
  filePages: number,
  readPage: (pgno: number) => Uint8Array,
): string | undefined {
  const stack = roots.filter((r) => r !== P_INVALID).map((r) => ({ pgno: r, from: 'a meta page' }));
  const seen = new Set<bigint>();
  while (stack.length > 0) {
    const { pgno, from } = stack.pop()!;
    if (seen.has(pgno)) continue;
    seen.add(pgno);
    if (pgno >= BigInt(filePages))
      return `page ${pgno}, referenced by ${from}, lies beyond the end of the file (${filePages} pages)`;
    const page = readPage(Number(pgno));
    const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
    const flags = view.getUint16(18, true);
    if (flags & P_OVERFLOW) {
      const last = pgno + BigInt(view.getUint32(20, true)) - 1n;
      if (last >= BigInt(filePages))
        return `overflow pages ${pgno}-${last}, referenced by ${from}, run past the end of the file (${filePages} pages)`;
      continue;
    }
    if ((flags & (P_BRANCH | P_LEAF)) === 0)
      return `page ${pgno}, referenced by ${from}, is not a tree page (flags ${flags})`;
    const count = view.getUint16(20, true) >> 1;
    for (let i = 0; i < count; i++) {
      const node = PAGE_HEADER + view.getUint16(PAGE_HEADER + 2 * i, true);
      if (node + NODE_HEADER > page.byteLength) return `page ${pgno} has a node outside the page`;
      const lo = BigInt(view.getUint16(node, true));
      const hi = BigInt(view.getUint16(node + 2, true));
      const nodeFlags = view.getUint16(node + 4, true);
      const data = node + NODE_HEADER + view.getUint16(node + 6, true);
      const here = `page ${pgno}`;
      if (flags & P_BRANCH) {
        stack.push({ pgno: lo | (hi << 16n) | (BigInt(nodeFlags) << 32n), from: here });
      } else if (nodeFlags & F_BIGDATA) {
        if (data + 8 > page.byteLength) return `page ${pgno} has a node outside the page`;
        stack.push({ pgno: view.getBigUint64(data, true), from: here });
      } else if (nodeFlags & F_SUBDATA) {
        if (data + 48 > page.byteLength) return `page ${pgno} has a node outside the page`;
        const root = view.getBigUint64(data + 40, true);
        if (root !== P_INVALID) stack.push({ pgno: root, from: `a sub-database record on ${here}` });
      }
    }
  }
  return undefined;
}

/**
 * Pure check of a data file of `fileSize` bytes whose meta pages are `meta0` (at offset 0) and
 * `meta1` (at offset page size, `undefined` when the file ends before it): the problem, or
 * `undefined` when the file holds every page in use. `readPage` serves the walk of reachable
 * pages when the file is shorter than the newest meta page's `last_pg` says.
 */
export function dataFileProblem(
  fileSize: number,
  meta0: Uint8Array,
  meta1: Uint8Array | undefined,
  readPage: (pgno: number, pageSize: number) => Uint8Array,
): string | undefined {
  if (fileSize === 0) return 'the file is empty (0 bytes)';
  const first = parseMetaPage(meta0);
  if (typeof first === 'string') return `meta page 0 is invalid (${first})`;
  const second = meta1 === undefined ? 'missing' : parseMetaPage(meta1);
  const newest = typeof second === 'string' || second.txnId < first.txnId ? first : second;
  if (typeof second === 'string' && fileSize < 2 * first.pageSize) {
    return `the file has ${fileSize} bytes, less than its two meta pages (${2 * first.pageSize} bytes)`;
  }
  const needed = (newest.lastPage + 1) * newest.pageSize;
  if (fileSize >= needed) return undefined;
  const filePages = Math.floor(fileSize / newest.pageSize);
  const unreachable = reachablePagesProblem(newest.roots, filePages, (pgno) =>
    readPage(pgno, newest.pageSize),
  );
  if (unreachable === undefined) return undefined; // only free pages are missing
  return (
    `the file has ${fileSize} bytes but its meta page (transaction ${newest.txnId}) uses pages 0-${newest.lastPage} ` +
    `of ${newest.pageSize} bytes (${needed} bytes): it was truncated (${unreachable})`
  );
}

/**
 * Reads the meta pages of the LMDB data file at `path` and throws when the file cannot be
 * mapped safely.
 * @throws CheckpointFileDamagedError naming the file and the problem.
 */
export function checkLmdbDataFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    // Meta pages first, size after: other threads or processes may be committing. LMDB writes
    // (and syncs) a transaction's pages before its meta page, so a size read after the meta
    // page covers every page that meta page uses. The other order could see a new meta page
    // with an old size and take a healthy file for a truncated one.
    const meta0 = new Uint8Array(META_BYTES);
    const read0 = readSync(fd, meta0, 0, META_BYTES, 0);
    const first = parseMetaPage(meta0.subarray(0, read0));
    let meta1: Uint8Array | undefined;
    if (typeof first !== 'string') {
      const buffer = new Uint8Array(META_BYTES);
      if (readSync(fd, buffer, 0, META_BYTES, first.pageSize) === META_BYTES) meta1 = buffer;
    }
    const size = fstatSync(fd).size;
    const problem = dataFileProblem(size, meta0.subarray(0, read0), meta1, (pgno, pageSize) => {
      const page = new Uint8Array(pageSize);
      readSync(fd, page, 0, pageSize, pgno * pageSize);
      return page;
    });
    if (problem !== undefined) throw new CheckpointFileDamagedError(path, problem);
  } finally {
    closeSync(fd);
  }
}
