/**
 * A copy-on-write snapshot of a heap keyed state backend, taken at a checkpoint barrier.
 *
 * Lifecycle: `backend.snapshot(id)` (synchronous, O(1) in the number of keys) → `serialize()` or
 * `chunks()` (asynchronous, may be called several times, for 'full' and for 'delta') →
 * `release()`. While live (until `release()`), the backend preserves for it the barrier-time value
 * of every entry touched after the barrier (see `heap-state-core.ts`); releasing stops that and
 * drops the preimages. Several snapshots may be live at once. A serialization with
 * `{ release: true }` (the checkpoint's) is the last use and releases as it goes: once a key
 * group is encoded, touches of its entries no longer make preimages for this snapshot (and a
 * delta never needed the groups it does not visit), so copy-on-write costs only for keys touched
 * before their group's turn.
 *
 * Serialization visits one key group at a time synchronously (one chunk per non-empty key group)
 * and yields to the event loop between key groups, at least every {@link YIELD_EVERY} entries, so
 * the task keeps processing records: the longest pause is one key group's encoding.
 */

import type { Packr } from 'msgpackr';
import { StateAccessError } from '../../errors.js';
import { type DirtyEpoch, mergeDirtyEpochs } from '../dirty-epochs.js';
import {
  type ChunkKind,
  type ChunkSection,
  encodeKeyGroupChunk,
  type KeyGroupChunk,
} from '../key-group-chunk.js';
import type { KeyGroupRange } from '../key-groups.js';
import type { SerializeOptions } from '../keyed-state-backend.js';
import type { StateEntry } from '../state-entry.js';
import type { StateTable } from '../state-table.js';
import type { CopyOnWriteSnapshot, HeapStateCore } from './heap-state-core.js';

/** Entries encoded between two yields to the event loop (a key group is never split). */
export const YIELD_EVERY = 4096;

/** What a serialized snapshot is, besides its chunks. Small; goes into checkpoint metadata. */
export interface KeyedStateSnapshotMetadata {
  readonly format: 1;
  /** 'delta' chunks apply on top of the state restored from `baseCheckpointId`'s chain. */
  readonly kind: ChunkKind;
  readonly checkpointId: number;
  /** For a delta: the checkpoint it is relative to (the newest confirmed one at snapshot time). */
  readonly baseCheckpointId: number | undefined;
  /** Backend clock at the barrier; TTL expiry is judged against it. */
  readonly timestamp: number;
  readonly maxParallelism: number;
  readonly keyGroupRange: KeyGroupRange;
  /** Key groups that have a chunk, ascending (empty or unchanged key groups have none). */
  readonly keyGroups: readonly number[];
  /** Upserted entries (full: all live entries) and tombstones written. */
  readonly entries: number;
  readonly tombstones: number;
  /** Total bytes of all chunks. */
  readonly bytes: number;
}

export interface SerializedKeyedState {
  readonly metadata: KeyedStateSnapshotMetadata;
  readonly chunks: readonly KeyGroupChunk[];
}

/** Which serialization to produce. 'delta' falls back to 'full' when there is no base. */
export type SnapshotMode = 'full' | 'delta';

interface Tally {
  entries: number;
  tombstones: number;
  bytes: number;
  keyGroups: number[];
  kind: ChunkKind;
}

export class HeapKeyedStateSnapshot implements CopyOnWriteSnapshot {
  readonly checkpointId: number;
  /** Backend clock at the barrier. */
  readonly timestamp: number;
  /** The epoch this snapshot captures (internal to copy-on-write). */
  readonly version: number;
  /** Base of this snapshot's delta, or undefined when only a full serialization is possible. */
  readonly baseCheckpointId: number | undefined;

  readonly #core: HeapStateCore;
  readonly #packr: Packr;
  readonly #epochs: readonly DirtyEpoch[];
  /** Group index → table → internal key → value at the barrier. Dropped on release. */
  #preimages: Map<number, Map<StateTable, Map<unknown, StateEntry>>> | undefined = new Map();
  /**
   * Set by a releasing serialization: 1 for the group indexes it no longer needs (encoded, or
   * not part of its delta). Copy-on-write skips them.
   */
  #doneGroups: Uint8Array | undefined;

  /** @internal Created by `HeapKeyedStateBackend.snapshot`. */
  constructor(
    core: HeapStateCore,
    packr: Packr,
    checkpointId: number,
    timestamp: number,
    begun: { version: number; baseCheckpointId: number | undefined; epochs: readonly DirtyEpoch[] },
  ) {
    this.#core = core;
    this.#packr = packr;
    this.checkpointId = checkpointId;
    this.timestamp = timestamp;
    this.version = begun.version;
    this.baseCheckpointId = begun.baseCheckpointId;
    this.#epochs = begun.epochs;
  }

  get released(): boolean {
    return this.#preimages === undefined;
  }

  /** @internal Copy-on-write hook (see `CopyOnWriteSnapshot`). */
  needsPreimage(groupIndex: number): boolean {
    return this.#doneGroups === undefined || this.#doneGroups[groupIndex] === 0;
  }

  /** @internal Copy-on-write hook (see `CopyOnWriteSnapshot`). */
  addPreimage(groupIndex: number, table: StateTable, internalKey: unknown, preimage: StateEntry): void {
    const pre = this.#preimages;
    if (pre === undefined) return;
    let byTable = pre.get(groupIndex);
    if (byTable === undefined) pre.set(groupIndex, (byTable = new Map()));
    let byKey = byTable.get(table);
    if (byKey === undefined) byTable.set(table, (byKey = new Map()));
    byKey.set(internalKey, preimage);
  }

  /** Serializes the snapshot into per-key-group chunks plus metadata. */
  async serialize(
    mode: SnapshotMode = 'full',
    options: SerializeOptions = {},
  ): Promise<SerializedKeyedState> {
    const tally = this.#newTally(mode);
    const chunks: KeyGroupChunk[] = [];
    for await (const c of this.#generate(tally, options.release === true)) chunks.push(c);
    return { metadata: this.#metadata(tally), chunks };
  }

  /**
   * Streams the chunks one key group at a time (ascending); for storage that writes as it goes.
   * The metadata of a streamed serialization is available from `serialize()` only.
   */
  chunks(
    mode: SnapshotMode = 'full',
    options: SerializeOptions = {},
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    return this.#generate(this.#newTally(mode), options.release === true);
  }

  /** Stops copy-on-write for this snapshot and drops its preimages. Idempotent. */
  release(): void {
    if (this.#preimages === undefined) return;
    this.#preimages = undefined;
    this.#core.removeLive(this);
  }

  #newTally(mode: SnapshotMode): Tally {
    const kind: ChunkKind = mode === 'delta' && this.baseCheckpointId !== undefined ? 'delta' : 'full';
    return { entries: 0, tombstones: 0, bytes: 0, keyGroups: [], kind };
  }

  #metadata(t: Tally): KeyedStateSnapshotMetadata {
    return {
      format: 1,
      kind: t.kind,
      checkpointId: this.checkpointId,
      baseCheckpointId: t.kind === 'delta' ? this.baseCheckpointId : undefined,
      timestamp: this.timestamp,
      maxParallelism: this.#core.maxParallelism,
      keyGroupRange: this.#core.range,
      keyGroups: t.keyGroups,
      entries: t.entries,
      tombstones: t.tombstones,
      bytes: t.bytes,
    };
  }

  #checkLive(): void {
    if (this.#preimages === undefined) {
      throw new StateAccessError(
        `snapshot of checkpoint ${this.checkpointId} was released before it was serialized`,
      );
    }
  }

  async *#generate(tally: Tally, release: boolean): AsyncGenerator<KeyGroupChunk, void, undefined> {
    this.#checkLive();
    if (this.#doneGroups !== undefined) {
      throw new StateAccessError(
        `snapshot of checkpoint ${this.checkpointId} is being released by its last serialization`,
      );
    }
    const groups = tally.kind === 'full' ? this.#allGroups() : mergeDirtyEpochs(this.#epochs);
    if (release) {
      // A delta reads only its dirty groups: the others need no preimage from now on.
      const done = new Uint8Array(this.#core.groupCount).fill(tally.kind === 'full' ? 0 : 1);
      if (tally.kind !== 'full') for (const [g] of groups) done[g] = 0;
      this.#doneGroups = done;
    }
    try {
      yield* this.#encodeGroups(tally, groups);
    } finally {
      if (release) this.release();
    }
  }

  async *#encodeGroups(
    tally: Tally,
    groups: Iterable<[number, Map<StateTable, Map<unknown, unknown>> | undefined]>,
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    const done = this.#doneGroups; // set by a releasing serialization
    let sinceYield = 0;
    for (const [g, dirty] of groups) {
      this.#checkLive();
      const sections =
        dirty === undefined ? this.#fullSections(g, tally) : this.#deltaSections(g, dirty, tally);
      if (done !== undefined) {
        // Encoded below from `sections` alone: group g's preimages are no longer needed.
        done[g] = 1;
        this.#preimages!.delete(g);
      }
      let work = 0;
      for (const s of sections) work += s[2].length / 3 + s[3].length;
      this.#core.counters.entriesSerialized += work;
      if (sections.length > 0) {
        const chunk = encodeKeyGroupChunk(
          this.#packr,
          this.#core.range.start + g,
          tally.kind,
          this.checkpointId,
          tally.kind === 'delta' ? this.baseCheckpointId : undefined,
          sections,
          this.#core.operatorName,
        );
        tally.keyGroups.push(chunk.keyGroup);
        tally.bytes += chunk.bytes.length;
        yield chunk;
      }
      sinceYield += work + 1;
      if (sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
  }

  *#allGroups(): Iterable<[number, undefined]> {
    for (let g = 0; g < this.#core.groupCount; g++) yield [g, undefined];
  }

  /**
   * Every entry of group `g` as of the barrier. Entries expired at the barrier are skipped and,
   * if still live, removed (TTL clean-up at snapshot; the removal preserves them for older live
   * snapshots that still see them).
   */
  #fullSections(g: number, tally: Tally): ChunkSection[] {
    const sections: ChunkSection[] = [];
    const version = this.version;
    const ts = this.timestamp;
    const preByTable = this.#preimages!.get(g);
    for (const table of this.#core.tables.values()) {
      const upserts: unknown[] = [];
      const live = table.groups[g];
      if (live !== undefined) {
        for (const [ik, e] of live) {
          if (e.version > version) continue; // touched after the barrier: preimage or absent
          if (e.expiresAt <= ts) {
            this.#core.removeAt(table, g, ik, e);
            continue;
          }
          upserts.push(e.key, table.toWire(e.value), wireExpiry(e.expiresAt));
        }
      }
      const pre = preByTable?.get(table);
      if (pre !== undefined) {
        for (const p of pre.values()) {
          if (p.expiresAt > ts) upserts.push(p.key, table.toWire(p.value), wireExpiry(p.expiresAt));
        }
      }
      if (upserts.length > 0) {
        tally.entries += upserts.length / 3;
        sections.push([table.name, table.kind, upserts, []]);
      }
    }
    return sections;
  }

  /** The barrier-time view of the dirty keys of group `g`: an upsert or a tombstone each. */
  #deltaSections(g: number, dirty: Map<StateTable, Map<unknown, unknown>>, tally: Tally): ChunkSection[] {
    const sections: ChunkSection[] = [];
    const preByTable = this.#preimages!.get(g);
    for (const [table, keys] of dirty) {
      const upserts: unknown[] = [];
      const tombstones: unknown[] = [];
      const live = table.groups[g];
      const pre = preByTable?.get(table);
      for (const [ik, userKey] of keys) {
        const e = live?.get(ik);
        const view = e !== undefined && e.version <= this.version ? e : pre?.get(ik);
        if (view !== undefined && view.expiresAt > this.timestamp) {
          upserts.push(view.key, table.toWire(view.value), wireExpiry(view.expiresAt));
        } else {
          tombstones.push(userKey);
        }
      }
      tally.entries += upserts.length / 3;
      tally.tombstones += tombstones.length;
      sections.push([table.name, table.kind, upserts, tombstones]);
    }
    return sections;
  }
}

function wireExpiry(expiresAt: number): number {
  return expiresAt === Number.POSITIVE_INFINITY ? 0 : expiresAt;
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
