/**
 * A snapshot of the lmdb keyed state backend: copy-on-write over LMDB, without a long-lived read
 * transaction. At the barrier it takes the write-back cache's pending writes packed
 * (`LmdbStateCore.pendingImage`, at most `maxPendingWrites` entries); from then on, while it is
 * live, every write-back of a key in a group it still preserves first copies the key's stored
 * bytes into the same image (`preserve`, called by `LmdbStateCore.flush` inside its write
 * transaction), unless the image already has the key. So for every key written since the
 * barrier the image holds its barrier bytes (`undefined`: absent), and every other key's bytes
 * in LMDB are its barrier bytes: the image over what LMDB holds *now* is the state at the barrier.
 * Each key group is read in its own short read transaction (one synchronous `sectionsOf`).
 *
 * Why not one read transaction for the whole encoding (the design before issue 14's lmdbpin14):
 * LMDB cannot reuse a page freed after its oldest live reader began, so while a multi-second scan
 * held its view every write-back commit allocated fresh pages: at 1 M keys the data file grew from
 * 96 MiB to 768 MiB over 20 full scans, and state access beside the scan cost 1.7–3.3× its CPU
 * without one (bench/README.md "lmdb snapshots without a long read transaction").
 *
 * Encoding produces the same key-group chunks as the heap backend (`key-group-chunk.ts`):
 * 'full' scans each key group's key range; 'delta' reads the keys touched since the base
 * checkpoint (the dirty epochs), an upsert or a tombstone each. An upsert is the entry's stored
 * msgpack bytes spliced into the chunk (`raw-upserts.ts`), not decoded and packed again: at
 * 1 M keys that decode + re-encode was most of the snapshot's work in the task's thread (issue 14). It runs one key group at a time
 * synchronously and yields to the event loop between key groups (the loop shared with the heap
 * snapshot, in `abstract-keyed-state-snapshot.ts`). A releasing encoding (the checkpoint's) stops
 * preserving each group once it is read, as the heap snapshot does.
 */

import type { Transaction } from 'lmdb';
import type { Packr } from 'msgpackr';
import { encodeValue } from '../../channels/msgpack-values.js';
import { StateAccessError } from '../../errors.js';
import {
  AbstractKeyedStateSnapshot,
  type DirtyKeys,
  type EncodeTally,
} from '../abstract-keyed-state-snapshot.js';
import { type DirtyEpoch, mergeDirtyEpochs } from '../dirty-epochs.js';
import type { SnapshotStrategy } from '../incremental-chain.js';
import type { KeyGroupChunk } from '../key-group-chunk.js';
import { readMsgpackNumber, skipMsgpack } from '../msgpack-skip.js';
import type { SectionToEncode } from '../number-section-writer.js';
import { RawUpserts } from '../raw-upserts.js';
import type { StateTable } from '../state-table.js';
import { groupPrefix, stateIdOf } from './lmdb-key-codec.js';
import type { LmdbStateCore, PendingImage } from './lmdb-state-core.js';

/**
 * Entries encoded between two yields to the event loop (a key group is never split). Lower
 * than the heap's: each entry is read from LMDB (its bytes are copied, not decoded).
 */
export const LMDB_YIELD_EVERY = 1024;

/** A delta's groups: group index → table → internal key → user key (`mergeDirtyEpochs`). */
type DeltaGroups = [number, DirtyKeys][];

export class LmdbKeyedStateSnapshot extends AbstractKeyedStateSnapshot {
  readonly #core: LmdbStateCore;
  readonly #epochs: readonly DirtyEpoch[];
  /** Barrier bytes of the keys written back since the barrier (and pending at it); they win over LMDB. */
  #image: PendingImage | undefined;
  /** Set by a releasing delta: the only keys it reads (group index → table → internal key → user key). */
  #deltaKeys: Map<number, DirtyKeys> | undefined;
  readonly #onRelease: (s: LmdbKeyedStateSnapshot) => void;

  /** @internal Created by `LmdbKeyedStateBackend.snapshot`, with the pending writes' image. */
  constructor(
    core: LmdbStateCore,
    strategy: SnapshotStrategy,
    checkpointId: number,
    timestamp: number,
    begun: { baseCheckpointId: number | undefined; epochs: readonly DirtyEpoch[] },
    image: PendingImage,
    onRelease: (s: LmdbKeyedStateSnapshot) => void,
  ) {
    super(core, core.packr, strategy, checkpointId, timestamp, begun.baseCheckpointId);
    this.#core = core;
    this.#epochs = begun.epochs;
    this.#image = image;
    this.#onRelease = onRelease;
  }

  get released(): boolean {
    return this.#image === undefined;
  }

  /**
   * Called by the write-back, inside its write transaction, before it writes `key` of group
   * `g`: keeps the key's barrier bytes if this snapshot still needs them. O(1) plus one LMDB read
   * (of the page the write is about to change) for the first write-back of a key.
   */
  preserve(g: number, table: StateTable, internalKey: unknown, key: Buffer): void {
    const image = this.#image;
    if (image === undefined || this.doneGroups?.[g] === 1) return;
    // A releasing delta never reads a key it did not mark dirty: no barrier bytes for it.
    if (this.#deltaKeys !== undefined && this.#deltaKeys.get(g)?.get(table)?.has(internalKey) !== true)
      return;
    let byTable = image.get(g);
    if (byTable === undefined) image.set(g, (byTable = new Map()));
    let bytes = byTable.get(table);
    if (bytes === undefined) byTable.set(table, (bytes = new Map()));
    // getBinary copies (getBinaryFast's buffer is reused by the next read).
    if (!bytes.has(internalKey)) bytes.set(internalKey, this.#core.db.getBinary(key));
  }

  /** With `release`, barrier bytes are dropped group by group as they are read, and all at the end. */
  protected async *generate(
    tally: EncodeTally,
    release: boolean,
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    this.#live();
    const groups = tally.kind === 'full' ? this.allGroups() : mergeDirtyEpochs(this.#epochs);
    this.startEncoding(tally.kind, groups, release);
    // A releasing delta reads only its dirty keys: write-backs of other keys need no barrier bytes.
    if (release && tally.kind === 'delta') this.#deltaKeys = new Map(groups as DeltaGroups);
    try {
      yield* this.encodeGroups(tally, groups, LMDB_YIELD_EVERY);
    } finally {
      if (release) this.release();
    }
  }

  /** Stops preserving barrier bytes and drops them. Idempotent. */
  release(): void {
    if (this.#image === undefined) return;
    this.#image = undefined;
    this.#onRelease(this);
  }

  #live(): PendingImage {
    if (this.#image === undefined) {
      throw new StateAccessError(
        `snapshot of checkpoint ${this.checkpointId} was released before it was serialized`,
      );
    }
    return this.#image;
  }

  /** Group `g` in one short read transaction (no write-back can run inside this synchronous call). */
  protected sectionsOf(
    g: number,
    dirty: Map<StateTable, Map<unknown, unknown>> | undefined,
  ): SectionToEncode[] {
    const image = this.#live().get(g);
    const txn = this.#core.db.useReadTransaction();
    try {
      return dirty === undefined
        ? this.#fullSections(g, image, txn)
        : this.#deltaSections(g, image, dirty, txn);
    } finally {
      txn.done();
    }
  }

  /** A releasing encoding encodes group `g` from its sections alone: its barrier bytes can go. */
  protected override groupRead(g: number, _work: number): void {
    if (this.doneGroups === undefined) return;
    this.#image?.delete(g);
    this.#deltaKeys?.delete(g);
  }

  /**
   * Every unexpired entry of group `g` at the barrier, by state: LMDB's, where the image has no
   * barrier bytes, and the image's. Each entry's stored bytes go into the chunk as they are
   * (`RawUpserts`): only its expiry is read. The image's keys are merged into the scan by LMDB key
   * (sorted once per group, O(image log image)), so a scanned entry costs one short byte compare
   * with the next image key, not a decode of its user key.
   */
  #fullSections(
    g: number,
    barrier: Map<StateTable, Map<unknown, Buffer | undefined>> | undefined,
    transaction: Transaction,
  ): SectionToEncode[] {
    const core = this.#core;
    const kg = core.range.start + g;
    const byState = new Map<number, RawUpserts>();
    const image: { key: Buffer; id: number; bytes: Buffer | undefined }[] = [];
    for (const [table, bytes] of barrier ?? []) {
      const id = core.stateIds.get(table)!;
      for (const [ik, b] of bytes) image.push({ key: core.keyOf(table, g, ik), id, bytes: b });
    }
    image.sort((x, y) => Buffer.compare(x.key, y.key));
    const add = (id: number, stored: Uint8Array | undefined): void => {
      if (stored === undefined) return; // absent at the barrier
      let upserts = byState.get(id);
      if (upserts === undefined) byState.set(id, (upserts = new RawUpserts()));
      addUnexpired(upserts, stored, this.timestamp, core.packr);
    };
    let next = 0; // image[next]: the first image key not yet merged
    for (const { key, value } of core.db.getRange({
      start: groupPrefix(kg),
      end: groupPrefix(kg + 1),
      transaction,
    })) {
      let c = 1;
      // Image keys before this one: LMDB no longer has them.
      while (next < image.length && (c = compareBytes(image[next].key, key)) < 0) {
        add(image[next].id, image[next].bytes);
        next++;
      }
      if (c === 0) {
        add(image[next].id, image[next].bytes); // its barrier bytes win over LMDB's
        next++;
      } else add(stateIdOf(key), value);
    }
    for (; next < image.length; next++) add(image[next].id, image[next].bytes);
    const sections: SectionToEncode[] = [];
    for (const [id, upserts] of [...byState].sort((a, b) => a[0] - b[0])) {
      if (upserts.entries === 0) continue; // every entry of the state expired
      const table = core.tablesById[id];
      sections.push([table.name, table.kind, upserts, []]);
    }
    return sections;
  }

  /** Each dirty key of group `g` in the image, else in LMDB: an upsert (its stored bytes) or a tombstone. */
  #deltaSections(
    g: number,
    image: Map<StateTable, Map<unknown, Buffer | undefined>> | undefined,
    dirty: Map<StateTable, Map<unknown, unknown>>,
    transaction: Transaction,
  ): SectionToEncode[] {
    const core = this.#core;
    // getBinaryFast's buffer is reused by the next read: `RawUpserts.add` copies it first.
    const get = core.db.getBinaryFast as (
      key: Buffer,
      options: { transaction: Transaction },
    ) => Buffer | undefined;
    const sections: SectionToEncode[] = [];
    for (const [table, keys] of dirty) {
      const upserts = new RawUpserts(Math.min(4096, 32 * keys.size));
      const tombstones: unknown[] = [];
      const pending = image?.get(table);
      for (const [ik, userKey] of keys) {
        const bytes =
          pending?.has(ik) === true
            ? pending.get(ik)
            : get.call(core.db, core.keyOf(table, g, ik), { transaction });
        if (bytes === undefined || !addUnexpired(upserts, bytes, this.timestamp, core.packr))
          tombstones.push(userKey);
      }
      sections.push([table.name, table.kind, upserts, tombstones]);
    }
    return sections;
  }
}

/**
 * Adds a stored entry to `upserts` unless it expired at `timestamp`; false when it did. The stored
 * layout is msgpack `[userKey, wire value, expiresAt or 0]` (`LmdbStateCore`'s write-back, restore):
 * a fixarray header (0x93), then the three elements, which are exactly a chunk's upsert triple.
 * Cost: skipping the key and the value (O(1) for scalars) and one copy of the bytes. Bytes whose
 * walk does not end exactly at their end (an extension `msgpack-skip.ts` does not know) are
 * decoded and packed again instead: slower, never wrong.
 */
function addUnexpired(upserts: RawUpserts, stored: Uint8Array, timestamp: number, packr: Packr): boolean {
  let exp: number;
  let raw = false;
  try {
    if (stored[0] === STORED_HEADER) {
      const expAt = skipMsgpack(stored, skipMsgpack(stored, 1));
      raw = skipMsgpack(stored, expAt) === stored.length;
      if (raw) exp = readMsgpackNumber(stored, expAt);
    }
  } catch {
    raw = false; // not a walk this module can make: decode instead (below)
  }
  if (raw) {
    if (exp! !== 0 && exp! <= timestamp) return false;
    upserts.add(stored, 1, stored.length);
    return true;
  }
  const entry = packr.unpack(stored) as [unknown, unknown, number];
  if (entry[2] !== 0 && entry[2] <= timestamp) return false;
  const again = packr.pack(encodeValue(entry, true));
  upserts.add(again, 1, again.length);
  return true;
}

/** Byte order of two LMDB keys (LMDB's own order); they usually differ within a few bytes. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** msgpack fixarray of 3: the first byte of every stored entry. */
const STORED_HEADER = 0x93;
