/**
 * What the heap and lmdb snapshots share: the barrier-time identity (checkpoint id, clock, delta
 * base), the snapshot strategy's decision and the checkpoint's `serialize`/`persisted` on top of
 * it, and the key-group loop that encodes chunks in the shared format (`key-group-chunk.ts`) and
 * yields to the event loop between key groups. A backend's snapshot supplies only how it reads
 * one key group's sections at the barrier (`sectionsOf`) and how it is kept alive and released.
 */

import type { Packr } from 'msgpackr';
import { StateAccessError } from '../errors.js';
import type { ChainDecision, DeltaWork, SnapshotStrategy } from './incremental-chain.js';
import { type ChunkKind, encodeKeyGroupChunk, type KeyGroupChunk } from './key-group-chunk.js';
import type { KeyGroupRange } from './key-groups.js';
import type {
  EncodeOptions,
  KeyedStateSnapshot,
  KeyedStateSnapshotMetadata,
  NamedChunk,
  SerializedKeyedState,
  SnapshotMode,
} from './keyed-state-backend.js';
import { type SectionToEncode, upsertCount } from './number-section-writer.js';
import type { StateTable } from './state-table.js';
import type { ChunkHandle } from './storage/chunk-handle.js';

/** What a snapshot needs from its backend's core to encode. */
export interface SnapshotSource {
  readonly maxParallelism: number;
  readonly range: KeyGroupRange;
  readonly groupCount: number;
  readonly operatorName: string;
}

/** Running totals of one encoding. */
export interface EncodeTally {
  readonly kind: ChunkKind;
  entries: number;
  tombstones: number;
  bytes: number;
  readonly keyGroups: number[];
}

/**
 * Group index → what a delta encodes of it (`D`: the backend's form of the group's dirty keys,
 * see `dirty-epochs.ts`); undefined: every key (full).
 */
export type GroupsToEncode<D> = Iterable<[number, D | undefined]>;

/** lmdb's dirty keys of a group: table → internal key → user key. */
export type DirtyKeys = Map<StateTable, Map<unknown, unknown>>;

export abstract class AbstractKeyedStateSnapshot<D = DirtyKeys> implements KeyedStateSnapshot {
  readonly checkpointId: number;
  /** Backend clock at the barrier. */
  readonly timestamp: number;
  /** Base of this snapshot's delta, or undefined when only a full encoding is possible. */
  readonly baseCheckpointId: number | undefined;
  protected readonly source: SnapshotSource;
  readonly #packr: Packr;
  readonly #strategy: SnapshotStrategy;
  /** The strategy's decision at the barrier. */
  readonly #decision: ChainDecision;

  protected constructor(
    source: SnapshotSource,
    packr: Packr,
    strategy: SnapshotStrategy,
    checkpointId: number,
    timestamp: number,
    baseCheckpointId: number | undefined,
    work?: DeltaWork,
  ) {
    this.source = source;
    this.#packr = packr;
    this.#strategy = strategy;
    this.checkpointId = checkpointId;
    this.timestamp = timestamp;
    this.baseCheckpointId = baseCheckpointId;
    this.#decision = strategy.decide(baseCheckpointId, work);
  }

  get mode(): SnapshotMode {
    return this.#decision.mode;
  }

  get sharedChunks(): readonly ChunkHandle[] {
    return this.#decision.shared;
  }

  abstract get released(): boolean;

  abstract release(): void;

  /**
   * The backend's chunk stream for `tally` (one chunk per non-empty key group, ascending): checks
   * the view is live, picks the groups (every group, or the dirty ones of a delta), runs
   * {@link encodeGroups}, and with `release` releases as it goes and when the stream ends
   * (completed, failed or returned early).
   */
  protected abstract generate(
    tally: EncodeTally,
    release: boolean,
  ): AsyncGenerator<KeyGroupChunk, void, undefined>;

  /** Encodes the snapshot into per-key-group chunks plus metadata. */
  async encode(mode: SnapshotMode = 'full', options: EncodeOptions = {}): Promise<SerializedKeyedState> {
    const tally = this.newTally(mode);
    const chunks: KeyGroupChunk[] = [];
    for await (const c of this.generate(tally, options.release === true)) chunks.push(c);
    return { metadata: this.metadata(tally), chunks };
  }

  /**
   * Streams the chunks one key group at a time (ascending); for storage that writes as it goes.
   * The metadata of a streamed encoding is available from `encode()` only.
   */
  chunks(
    mode: SnapshotMode = 'full',
    options: EncodeOptions = {},
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    return this.generate(this.newTally(mode), options.release === true);
  }

  /**
   * The checkpoint's encoding as a stream (its last use: releasing as it goes), so that the
   * task writes chunks while later key groups are still being encoded and holds a bounded part
   * of the snapshot's bytes instead of all of them.
   */
  async *serializeChunks(): AsyncGenerator<NamedChunk, void, undefined> {
    const mode = this.#decision.mode;
    const tally = this.newTally(mode);
    if (tally.kind !== mode) {
      // The backend had no base for a delta although the strategy had one: they disagree.
      this.release();
      throw new Error(`keyed snapshot of checkpoint ${this.checkpointId} is ${tally.kind}, expected ${mode}`);
    }
    for await (const c of this.generate(tally, true))
      yield { name: `kg-${c.keyGroup}`, keyGroup: c.keyGroup, bytes: c.bytes };
  }

  async serialize(): Promise<readonly NamedChunk[]> {
    const chunks: NamedChunk[] = [];
    for await (const c of this.serializeChunks()) chunks.push(c);
    return chunks;
  }

  persisted(handles: readonly ChunkHandle[]): void {
    this.#strategy.persisted(this.checkpointId, this.#decision, handles);
  }

  /** The tally of an encoding in `mode`: a delta only when there is a base. */
  protected newTally(mode: SnapshotMode): EncodeTally {
    const kind: ChunkKind = mode === 'delta' && this.baseCheckpointId !== undefined ? 'delta' : 'full';
    return { kind, entries: 0, tombstones: 0, bytes: 0, keyGroups: [] };
  }

  /** Every group index of the range, for a full encoding. */
  protected *allGroups(): Iterable<[number, undefined]> {
    for (let g = 0; g < this.source.groupCount; g++) yield [g, undefined];
  }

  /**
   * The barrier-time sections of group index `g`: every unexpired entry by state (`dirty`
   * undefined), or an upsert or a tombstone per dirty key. Throws once released.
   */
  protected abstract sectionsOf(g: number, dirty: D | undefined): SectionToEncode[];

  /**
   * Set by a releasing encoding (a checkpoint's, the snapshot's last use): 1 for each group index
   * it no longer reads (encoded already, or outside its delta). Copy-on-write skips those groups.
   */
  protected doneGroups: Uint8Array | undefined;

  /**
   * Called by `generate` before it encodes `groups` (every group for a full encoding, the dirty
   * ones of a delta): throws while a releasing encoding runs; with `release`, starts one (the
   * groups a delta does not visit are done at once, the others as {@link encodeGroups} reads them).
   */
  protected startEncoding(kind: ChunkKind, groups: GroupsToEncode<D>, release: boolean): void {
    if (this.doneGroups !== undefined) {
      throw new StateAccessError(
        `snapshot of checkpoint ${this.checkpointId} is being released by its last serialization`,
      );
    }
    if (!release) return;
    const done = new Uint8Array(this.source.groupCount).fill(kind === 'full' ? 0 : 1);
    if (kind !== 'full') for (const [g] of groups) done[g] = 0;
    this.doneGroups = done;
  }

  /**
   * Called after group `g`'s sections were read, before they are encoded (`work`: entries in them),
   * and after `doneGroups` marked it done in a releasing encoding.
   */
  protected groupRead(_g: number, _work: number): void {}

  /**
   * Encodes `groups` one at a time (one chunk per group with sections), yielding to the event loop
   * at least every `yieldEvery` entries (a key group is never split): the longest pause is one key
   * group's encoding.
   */
  protected async *encodeGroups(
    tally: EncodeTally,
    groups: GroupsToEncode<D>,
    yieldEvery: number,
  ): AsyncGenerator<KeyGroupChunk, void, undefined> {
    const src = this.source;
    let sinceYield = 0;
    for (const [g, dirty] of groups) {
      const sections = this.sectionsOf(g, dirty);
      let work = 0;
      for (const s of sections) {
        const upserts = upsertCount(s);
        tally.entries += upserts;
        tally.tombstones += s[3].length;
        work += upserts + s[3].length;
      }
      if (this.doneGroups !== undefined) this.doneGroups[g] = 1;
      this.groupRead(g, work);
      if (sections.length > 0) {
        const chunk = encodeKeyGroupChunk(
          this.#packr,
          src.range.start + g,
          tally.kind,
          this.checkpointId,
          tally.kind === 'delta' ? this.baseCheckpointId : undefined,
          sections,
          src.operatorName,
        );
        tally.keyGroups.push(chunk.keyGroup);
        tally.bytes += chunk.bytes.length;
        yield chunk;
      }
      sinceYield += work + 1;
      if (sinceYield >= yieldEvery) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
  }

  protected metadata(t: EncodeTally): KeyedStateSnapshotMetadata {
    return {
      format: 1,
      kind: t.kind,
      checkpointId: this.checkpointId,
      baseCheckpointId: t.kind === 'delta' ? this.baseCheckpointId : undefined,
      timestamp: this.timestamp,
      maxParallelism: this.source.maxParallelism,
      keyGroupRange: this.source.range,
      keyGroups: t.keyGroups,
      entries: t.entries,
      tombstones: t.tombstones,
      bytes: t.bytes,
    };
  }
}

/** Wire form of an expiry time: 0 for never. */
export function wireExpiry(expiresAt: number): number {
  return expiresAt === Number.POSITIVE_INFINITY ? 0 : expiresAt;
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
