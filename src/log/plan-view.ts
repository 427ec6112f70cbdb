/**
 * The writes of one group of log operations (appends, transactional appends, retention runs),
 * planned together on top of one read snapshot.
 *
 * A planner reads through the view: an entry an earlier operation of the same group wrote comes
 * from the view's overlay, anything else from the snapshot. So the second append of a group to a
 * partition gets the offsets after the first's, the second transaction of a writer sees the
 * first's marker, and retention sees records appended earlier in the group.
 *
 * Conditions. Every versioned entry a plan depends on is `require`d with the version it had in
 * the snapshot (`null`: must not exist). Entries written earlier in the group need no condition
 * of their own: the write that put them there is conditional on the snapshot version already.
 * Applied asynchronously, the whole group is written only if every condition still holds at
 * commit time, i.e. if no other thread or process committed a change to what the group read;
 * otherwise nothing is written and the group is planned again (see `group-commit.ts`). Applied
 * inside a synchronous write transaction, the snapshot is the transaction itself and the
 * conditions hold trivially.
 *
 * Cost: one Map lookup per read; an entry is read (and decoded) from LMDB once per group; the
 * overlay holds one entry per key written by the group, and the group writes each key once.
 */

import type { Database } from 'lmdb';

export type Key = (string | number)[];

/** A read a plan depends on: the entry must still have this version (`null`: must not exist). */
export interface PlanCondition {
  readonly db: Database<any, any>;
  readonly key: Key | string;
  readonly version: number | null;
}

export type PlanOp =
  | {
      readonly kind: 'put';
      readonly db: Database<any, any>;
      readonly key: Key | string;
      readonly value: unknown;
      readonly version?: number;
    }
  | { readonly kind: 'remove'; readonly db: Database<any, any>; readonly key: Key | string };

export interface VersionedEntry<V> {
  readonly value: V;
  /** `null`: the entry does not exist (reads of a versioned entry that was never written). */
  readonly version: number | null;
}

/** A key the group wrote: its last value (or removal) and the index of its one op in `ops`. */
type Overlaid = {
  readonly value: unknown;
  readonly version: number | null;
  readonly removed: boolean;
  readonly index: number;
};

export class PlanView {
  /** Conditions of the whole group, at most one per (database, key). */
  readonly conditions: PlanCondition[] = [];
  /** Writes of the whole group in planning order (later writes of a key win, as in LMDB). */
  readonly ops: PlanOp[] = [];
  /**
   * Invariant: holds every key `ops` writes with its last written value, except writes made with
   * {@link putUnread}, which nothing reads.
   */
  readonly #overlay = new Map<Database<any, any>, Map<string, Overlaid>>();
  readonly #required = new Map<Database<any, any>, Set<string>>();
  /**
   * Entries read from the snapshot, decoded once per group: the snapshot does not change while
   * the group is planned, and the appends of a group read the same few metadata entries (topic,
   * partitions) over and over. Values are shared: planners never mutate what they read.
   */
  readonly #read = new Map<Database<any, any>, Map<string, VersionedEntry<unknown> | undefined>>();

  /**
   * Record batches the group wrote with {@link put} (topics with retention), per partition
   * (`"topicId,partition"`), ascending by base offset: retention finds the batch holding a
   * partition's head here when the group itself appended it (`record-batch.ts`).
   */
  readonly #batches = new Map<string, { readonly base: number; readonly value: Buffer }[]>();

  wroteBatch(partitionKey: string, base: number, value: Buffer): void {
    const list = this.#batches.get(partitionKey);
    if (list === undefined) this.#batches.set(partitionKey, [{ base, value }]);
    else list.push({ base, value });
  }

  /** Batches of the partition the group wrote, ascending (`undefined`: none). */
  batchesOf(partitionKey: string): readonly { readonly base: number; readonly value: Buffer }[] | undefined {
    return this.#batches.get(partitionKey);
  }

  /** The entry as the group sees it: written earlier in the group, else from the snapshot. */
  getEntry<V>(db: Database<any, any>, key: Key | string): VersionedEntry<V> | undefined {
    const k = keyString(key);
    const o = this.#overlay.get(db)?.get(k);
    if (o !== undefined) return o.removed ? undefined : (o as unknown as VersionedEntry<V>);
    let read = this.#read.get(db);
    if (read === undefined) this.#read.set(db, (read = new Map()));
    if (read.has(k)) return read.get(k) as VersionedEntry<V> | undefined;
    const entry = db.getEntry(key);
    const seen = entry === undefined ? undefined : { value: entry.value as V, version: entry.version ?? 0 };
    read.set(k, seen);
    return seen;
  }

  get<V>(db: Database<any, any>, key: Key | string): V | undefined {
    return this.getEntry<V>(db, key)?.value;
  }

  exists(db: Database<any, any>, key: Key | string): boolean {
    const o = this.#overlay.get(db)?.get(keyString(key));
    if (o !== undefined) return !o.removed;
    return db.doesExist(key);
  }

  /** A binary value without a copy (snapshot values are only valid until the snapshot renews). */
  getBinary(db: Database<any, any>, key: Key): Uint8Array | undefined {
    const o = this.#overlay.get(db)?.get(keyString(key));
    if (o !== undefined) return o.removed ? undefined : (o.value as Uint8Array);
    return db.getBinaryFast(key);
  }

  /**
   * The group is written only if `key` still has `version` in `db` at commit time. A no-op for an
   * entry the group wrote already (its first write carries the condition) or required already.
   */
  require(db: Database<any, any>, key: Key | string, version: number | null): void {
    const k = keyString(key);
    if (this.#overlay.get(db)?.has(k)) return;
    let required = this.#required.get(db);
    if (required === undefined) this.#required.set(db, (required = new Set()));
    if (required.has(k)) return;
    required.add(k);
    this.conditions.push({ db, key, version });
  }

  /**
   * Writes `key`. A key the group wrote before keeps one op, at its first write's place, with
   * the last value: the appends of a group to one partition write its metadata once, not once
   * per append (LMDB keeps only the last write of a key in a transaction anyway).
   */
  put(db: Database<any, any>, key: Key | string, value: unknown, version?: number): void {
    const op: PlanOp =
      version === undefined ? { kind: 'put', db, key, value } : { kind: 'put', db, key, value, version };
    this.#write(db, key, op, value, version ?? null, false);
  }

  /**
   * A write no later read of this group looks at (a record of a topic without retention: only
   * retention reads records while planning). Skips the overlay: the hot path of an append.
   */
  putUnread(db: Database<any, any>, key: Key | string, value: unknown): void {
    this.ops.push({ kind: 'put', db, key, value });
  }

  remove(db: Database<any, any>, key: Key | string): void {
    this.#write(db, key, { kind: 'remove', db, key }, undefined, null, true);
  }

  #write(
    db: Database<any, any>,
    key: Key | string,
    op: PlanOp,
    value: unknown,
    version: number | null,
    removed: boolean,
  ): void {
    let layer = this.#overlay.get(db);
    if (layer === undefined) this.#overlay.set(db, (layer = new Map()));
    const k = keyString(key);
    const earlier = layer.get(k);
    let index: number;
    if (earlier === undefined) index = this.ops.push(op) - 1;
    else {
      index = earlier.index;
      this.ops[index] = op;
    }
    layer.set(k, { value, version, removed, index });
  }
}

/**
 * Keys are strings or arrays of strings and numbers: all-number arrays (records, partitions — the
 * hot path) join cheaply, anything else goes through JSON, which tells them apart exactly.
 */
function keyString(key: Key | string): string {
  if (typeof key === 'string') return `s${key}`;
  for (let i = 0; i < key.length; i++) if (typeof key[i] !== 'number') return JSON.stringify(key);
  return key.join(',');
}

/** Inside a synchronous write transaction. */
export function applyOpSync(op: PlanOp): void {
  if (op.kind === 'put') {
    if (op.version === undefined) op.db.put(op.key, op.value);
    else op.db.put(op.key, op.value, op.version);
  } else op.db.remove(op.key);
}

/**
 * Issues the group's writes as nested lmdb-js conditional writes (executed by lmdb-js's native
 * write thread in one transaction, with no JavaScript in between): every op is written only if
 * every condition holds. Resolves with whether it was written, once the transaction committed
 * (and, unless the log is opened with `durability: 'os'`, was fsynced).
 */
export function applyConditionally(view: PlanView): Promise<boolean> {
  const outcomes: Promise<boolean>[] = [];
  const writes: Promise<unknown>[] = [];
  const { conditions, ops } = view;
  const nest = (i: number): void => {
    if (i === conditions.length) {
      for (const op of ops) {
        if (op.kind === 'put') {
          writes.push(
            op.version === undefined ? op.db.put(op.key, op.value) : op.db.put(op.key, op.value, op.version),
          );
        } else writes.push(op.db.remove(op.key));
      }
      return;
    }
    const c = conditions[i];
    outcomes.push(
      c.version === null
        ? c.db.ifNoExists(c.key, () => nest(i + 1))
        : c.db.ifVersion(c.key, c.version, () => nest(i + 1)),
    );
  };
  nest(0);
  // The individual writes settle with the conditions; a write error rejects here.
  return Promise.all([Promise.all(outcomes), Promise.all(writes)]).then(([ok]) => ok.every(Boolean));
}
