/**
 * A snapshot of the lmdb keyed state backend: an LMDB read transaction opened at the barrier
 * (an MVCC view that later writes cannot change) plus the write-back cache's pending writes packed
 * at the barrier (`LmdbStateCore.pendingImage`, at most `maxPendingWrites` entries): where the
 * image has a key, it wins over the view. Together they are the state at the barrier, without a
 * write transaction in the barrier's pause. Holding the view open costs LMDB pages kept alive.
 *
 * Encoding produces the same key-group chunks as the heap backend (`key-group-chunk.ts`):
 * 'full' scans each key group's key range in the view; 'delta' reads the keys touched since the
 * base checkpoint (the dirty epochs) in the view, an upsert or a tombstone each. It runs one key
 * group at a time synchronously and yields to the event loop between key groups (the loop shared
 * with the heap snapshot, in `abstract-keyed-state-snapshot.ts`).
 */

import type { Transaction } from 'lmdb';
import { StateAccessError } from '../../errors.js';
import { AbstractKeyedStateSnapshot, type EncodeTally } from '../abstract-keyed-state-snapshot.js';
import { type DirtyEpoch, mergeDirtyEpochs } from '../dirty-epochs.js';
import type { SnapshotStrategy } from '../incremental-chain.js';
import { internalKeyOf } from '../internal-key.js';
import type { ChunkSection, KeyGroupChunk } from '../key-group-chunk.js';
import type { StateTable } from '../state-table.js';
import { groupPrefix, stateIdOf } from './lmdb-key-codec.js';
import type { LmdbStateCore, PendingImage } from './lmdb-state-core.js';

/**
 * Entries encoded between two yields to the event loop (a key group is never split). Lower
 * than the heap's: each entry is read from LMDB and decoded before it is encoded again.
 */
export const LMDB_YIELD_EVERY = 1024;

/** A stored entry, decoded: `[userKey, wire value, expiresAt or 0]`. */
type Stored = [unknown, unknown, number];

export class LmdbKeyedStateSnapshot extends AbstractKeyedStateSnapshot {
  readonly #core: LmdbStateCore;
  readonly #epochs: readonly DirtyEpoch[];
  /** The pending writes at the barrier; they win over the view. */
  readonly #image: PendingImage;
  #txn: Transaction | undefined;
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
    this.#txn = core.db.useReadTransaction();
  }

  get released(): boolean {
    return this.#txn === undefined;
  }

  /** With `release`, the read transaction ends as soon as the encoding does. */
  protected async *generate(
    tally: EncodeTally,
    release: boolean,
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    try {
      this.#live();
      const groups = tally.kind === 'full' ? this.allGroups() : mergeDirtyEpochs(this.#epochs);
      yield* this.encodeGroups(tally, groups, LMDB_YIELD_EVERY);
    } finally {
      if (release) this.release();
    }
  }

  /** Ends the read transaction. Idempotent. */
  release(): void {
    const txn = this.#txn;
    if (txn === undefined) return;
    this.#txn = undefined;
    txn.done();
    this.#onRelease(this);
  }

  #live(): Transaction {
    if (this.#txn === undefined) {
      throw new StateAccessError(
        `snapshot of checkpoint ${this.checkpointId} was released before it was serialized`,
      );
    }
    return this.#txn;
  }

  protected sectionsOf(g: number, dirty: Map<StateTable, Map<unknown, unknown>> | undefined): ChunkSection[] {
    const txn = this.#live();
    return dirty === undefined ? this.#fullSections(g, txn) : this.#deltaSections(g, dirty, txn);
  }

  /** Every unexpired entry of group `g`, by state: the view's, where the image has no newer bytes, then the image's new keys. */
  #fullSections(g: number, transaction: Transaction): ChunkSection[] {
    const core = this.#core;
    const kg = core.range.start + g;
    const byState = new Map<number, unknown[]>();
    // A copy per encoding: the scan removes the keys it meets, what is left is new since the view.
    const image = new Map<number, Map<unknown, Buffer | undefined>>();
    for (const [table, bytes] of this.#image.get(g) ?? [])
      image.set(core.stateIds.get(table)!, new Map(bytes));
    const add = (id: number, [userKey, wire, exp]: Stored): void => {
      if (exp !== 0 && exp <= this.timestamp) return;
      let upserts = byState.get(id);
      if (upserts === undefined) byState.set(id, (upserts = []));
      upserts.push(userKey, wire, exp);
    };
    for (const { key, value } of core.db.getRange({
      start: groupPrefix(kg),
      end: groupPrefix(kg + 1),
      transaction,
    })) {
      const id = stateIdOf(key);
      let stored = core.packr.unpack(value) as Stored;
      const pending = image.size === 0 ? undefined : image.get(id);
      if (pending !== undefined) {
        const ik = internalKeyOf(stored[0]);
        if (pending.has(ik)) {
          const newer = pending.get(ik);
          pending.delete(ik);
          if (newer === undefined) continue;
          stored = core.packr.unpack(newer) as Stored;
        }
      }
      add(id, stored);
    }
    for (const [id, pending] of image)
      for (const bytes of pending.values())
        if (bytes !== undefined) add(id, core.packr.unpack(bytes) as Stored);
    const sections: ChunkSection[] = [];
    for (const [id, upserts] of [...byState].sort((a, b) => a[0] - b[0])) {
      const table = core.tablesById[id];
      sections.push([table.name, table.kind, upserts, []]);
    }
    return sections;
  }

  /** Each dirty key of group `g` in the image, else in the view: an upsert or a tombstone. */
  #deltaSections(
    g: number,
    dirty: Map<StateTable, Map<unknown, unknown>>,
    transaction: Transaction,
  ): ChunkSection[] {
    const core = this.#core;
    const get = core.db.getBinary as (
      key: Buffer,
      options: { transaction: Transaction },
    ) => Buffer | undefined;
    const sections: ChunkSection[] = [];
    const image = this.#image.get(g);
    for (const [table, keys] of dirty) {
      const upserts: unknown[] = [];
      const tombstones: unknown[] = [];
      const pending = image?.get(table);
      for (const [ik, userKey] of keys) {
        const bytes =
          pending?.has(ik) === true
            ? pending.get(ik)
            : get.call(core.db, core.keyOf(table, g, ik), { transaction });
        if (bytes !== undefined) {
          const [key, wire, exp] = core.packr.unpack(bytes) as [unknown, unknown, number];
          if (exp === 0 || exp > this.timestamp) {
            upserts.push(key, wire, exp);
            continue;
          }
        }
        tombstones.push(userKey);
      }
      sections.push([table.name, table.kind, upserts, tombstones]);
    }
    return sections;
  }
}
