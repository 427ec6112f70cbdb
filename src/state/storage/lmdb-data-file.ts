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
 * Cost: two reads of 160 bytes per open.
 */

import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { CheckpointFileDamagedError } from '../../errors.js';

const META_BYTES = 160;
const P_META = 0x08;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;
/**
 * Pages a healthy file may lack at its end: LMDB can free pages it allocated at the end of the
 * file within the same transaction ("loose" pages) without ever writing them, while `last_pg`
 * still counts them. Those pages are free, so LMDB never reads them. A truncation that removed
 * only this few pages of live data is not caught (and nothing in this size check can tell the two
 * apart); truncations seen in practice (an interrupted copy, a partial backup) cut far more.
 */
export const UNWRITTEN_TAIL_PAGES_TOLERATED = 16;

export interface LmdbMeta {
  readonly pageSize: number;
  readonly lastPage: number;
  readonly txnId: bigint;
  readonly mapSize: number;
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
  };
}

/**
 * Pure check of a data file of `fileSize` bytes whose meta pages are `meta0` (at offset 0) and
 * `meta1` (at offset page size, `undefined` when the file ends before it): the problem, or
 * `undefined` when the file holds every page the newest valid meta page says is in use.
 */
export function dataFileProblem(
  fileSize: number,
  meta0: Uint8Array,
  meta1: Uint8Array | undefined,
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
  if (fileSize < needed - UNWRITTEN_TAIL_PAGES_TOLERATED * newest.pageSize) {
    return (
      `the file has ${fileSize} bytes but its meta page (transaction ${newest.txnId}) uses pages 0-${newest.lastPage} ` +
      `of ${newest.pageSize} bytes (${needed} bytes): it was truncated`
    );
  }
  return undefined;
}

/**
 * Reads the meta pages of the LMDB data file at `path` and throws when the file cannot be
 * mapped safely.
 * @throws CheckpointFileDamagedError naming the file and the problem.
 */
export function checkLmdbDataFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const meta0 = new Uint8Array(META_BYTES);
    const read0 = readSync(fd, meta0, 0, META_BYTES, 0);
    const first = parseMetaPage(meta0.subarray(0, read0));
    let meta1: Uint8Array | undefined;
    if (typeof first !== 'string' && size >= first.pageSize + META_BYTES) {
      meta1 = new Uint8Array(META_BYTES);
      readSync(fd, meta1, 0, META_BYTES, first.pageSize);
    }
    const problem = dataFileProblem(size, meta0.subarray(0, read0), meta1);
    if (problem !== undefined) throw new CheckpointFileDamagedError(path, problem);
  } finally {
    closeSync(fd);
  }
}
