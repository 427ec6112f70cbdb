/**
 * A snapshot of the lmdb keyed state backend: an LMDB read transaction opened at the barrier
 * (after the write-back cache was flushed), i.e. an MVCC view of the state at the barrier that
 * later writes cannot change. Holding it open costs LMDB pages kept alive, not copies.
 *
 * Serialization produces the same key-group chunks as the heap backend (`key-group-chunk.ts`):
 * 'full' scans each key group's key range in the view; 'delta' reads the keys touched since the
 * base checkpoint (the dirty epochs) in the view, an upsert or a tombstone each. It runs one key
 * group at a time synchronously and yields to the event loop between key groups.
 */

import type { Transaction } from 'lmdb';
import { StateAccessError } from '../../errors.js';
import { type DirtyEpoch, mergeDirtyEpochs } from '../dirty-epochs.js';
import type {
  KeyedStateSnapshotMetadata,
  SerializedKeyedState,
  SnapshotMode,
} from '../heap/heap-keyed-state-snapshot.js';
import {
  type ChunkKind,
  type ChunkSection,
  encodeKeyGroupChunk,
  type KeyGroupChunk,
} from '../key-group-chunk.js';
import type { KeyedStateBackendSnapshot, SerializeOptions } from '../keyed-state-backend.js';
import type { StateTable } from '../state-table.js';
import { groupPrefix, stateIdOf } from './lmdb-key-codec.js';
import type { LmdbStateCore } from './lmdb-state-core.js';

/**
 * Entries serialized between two yields to the event loop (a key group is never split). Lower
 * than the heap's: each entry is read from LMDB and decoded before it is encoded again.
 */
export const LMDB_YIELD_EVERY = 1024;

export class LmdbKeyedStateSnapshot implements KeyedStateBackendSnapshot {
  readonly checkpointId: number;
  readonly timestamp: number;
  readonly baseCheckpointId: number | undefined;
  readonly #core: LmdbStateCore;
  readonly #epochs: readonly DirtyEpoch[];
  #txn: Transaction | undefined;
  readonly #onRelease: (s: LmdbKeyedStateSnapshot) => void;

  /** @internal Created by `LmdbKeyedStateBackend.snapshot` right after a flush. */
  constructor(
    core: LmdbStateCore,
    checkpointId: number,
    timestamp: number,
    begun: { baseCheckpointId: number | undefined; epochs: readonly DirtyEpoch[] },
    onRelease: (s: LmdbKeyedStateSnapshot) => void,
  ) {
    this.#core = core;
    this.checkpointId = checkpointId;
    this.timestamp = timestamp;
    this.baseCheckpointId = begun.baseCheckpointId;
    this.#epochs = begun.epochs;
    this.#onRelease = onRelease;
    this.#txn = core.db.useReadTransaction();
  }

  get released(): boolean {
    return this.#txn === undefined;
  }

  /** With `release`, the read transaction ends as soon as the serialization does. */
  async serialize(
    mode: SnapshotMode = 'full',
    options: SerializeOptions = {},
  ): Promise<SerializedKeyedState> {
    this.#live();
    try {
      return await this.#serialize(mode);
    } finally {
      if (options.release === true) this.release();
    }
  }

  async #serialize(mode: SnapshotMode): Promise<SerializedKeyedState> {
    const kind: ChunkKind = mode === 'delta' && this.baseCheckpointId !== undefined ? 'delta' : 'full';
    const chunks: KeyGroupChunk[] = [];
    let entries = 0;
    let tombstones = 0;
    let bytes = 0;
    let sinceYield = 0;
    const groups = kind === 'full' ? this.#allGroups() : mergeDirtyEpochs(this.#epochs);
    for (const [g, dirty] of groups) {
      const txn = this.#live();
      const sections = dirty === undefined ? this.#fullSections(g, txn) : this.#deltaSections(g, dirty, txn);
      let work = 1;
      for (const s of sections) {
        entries += s[2].length / 3;
        tombstones += s[3].length;
        work += s[2].length / 3 + s[3].length;
      }
      if (sections.length > 0) {
        const chunk = encodeKeyGroupChunk(
          this.#core.packr,
          this.#core.range.start + g,
          kind,
          this.checkpointId,
          kind === 'delta' ? this.baseCheckpointId : undefined,
          sections,
          this.#core.operatorName,
        );
        bytes += chunk.bytes.length;
        chunks.push(chunk);
      }
      sinceYield += work;
      if (sinceYield >= LMDB_YIELD_EVERY) {
        sinceYield = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    const metadata: KeyedStateSnapshotMetadata = {
      format: 1,
      kind,
      checkpointId: this.checkpointId,
      baseCheckpointId: kind === 'delta' ? this.baseCheckpointId : undefined,
      timestamp: this.timestamp,
      maxParallelism: this.#core.maxParallelism,
      keyGroupRange: this.#core.range,
      keyGroups: chunks.map((c) => c.keyGroup),
      entries,
      tombstones,
      bytes,
    };
    return { metadata, chunks };
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

  *#allGroups(): Iterable<[number, undefined]> {
    for (let g = 0; g < this.#core.groupCount; g++) yield [g, undefined];
  }

  /** Every unexpired entry of group `g` in the view, by state. */
  #fullSections(g: number, transaction: Transaction): ChunkSection[] {
    const core = this.#core;
    const kg = core.range.start + g;
    const byState = new Map<number, unknown[]>();
    for (const { key, value } of core.db.getRange({
      start: groupPrefix(kg),
      end: groupPrefix(kg + 1),
      transaction,
    })) {
      const id = stateIdOf(key);
      const [userKey, wire, exp] = core.packr.unpack(value) as [unknown, unknown, number];
      if (exp !== 0 && exp <= this.timestamp) continue;
      let upserts = byState.get(id);
      if (upserts === undefined) byState.set(id, (upserts = []));
      upserts.push(userKey, wire, exp);
    }
    const sections: ChunkSection[] = [];
    for (const [id, upserts] of [...byState].sort((a, b) => a[0] - b[0])) {
      const table = core.tablesById[id];
      sections.push([table.name, table.kind, upserts, []]);
    }
    return sections;
  }

  /** The view of each dirty key of group `g`: an upsert or a tombstone. */
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
    for (const [table, keys] of dirty) {
      const upserts: unknown[] = [];
      const tombstones: unknown[] = [];
      for (const [ik, userKey] of keys) {
        const bytes = get.call(core.db, core.keyOf(table, g, ik), { transaction });
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
