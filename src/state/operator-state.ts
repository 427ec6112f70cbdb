/**
 * Operator (non-keyed) state: named list states of one operator subtask, used by sources for
 * their read positions and by sinks for pending transactions. Each list is redistributed on
 * restore at another parallelism according to its mode (see `redistribute-operator-state.ts`).
 *
 * Operator state is small (a few entries per subtask), so its snapshot deep-copies it at the
 * barrier: O(operator state size), not copy-on-write. The serialized form is one msgpack blob
 * with a CRC-32 trailer.
 */

import { Packr } from 'msgpackr';
import { CorruptStateError, StateAccessError } from '../errors.js';
import { copyValue } from './copy-value.js';
import { crc32 } from './crc32.js';
import {
  type OperatorStateDistributionMode,
  redistributeOperatorState,
} from './redistribute-operator-state.js';

/** One named operator list state of one subtask. */
export interface OperatorListState<T> extends Iterable<T> {
  /** The stored array; mutations are state changes. */
  get(): T[];
  add(value: T): void;
  addAll(values: Iterable<T>): void;
  update(values: Iterable<T>): void;
  clear(): void;
}

/** The operator state of one subtask at a barrier: name → mode and entries (deep copies). */
export interface OperatorStateSnapshot {
  readonly checkpointId: number;
  readonly states: Readonly<
    Record<string, { readonly mode: OperatorStateDistributionMode; readonly entries: unknown[] }>
  >;
}

const TRAILER_BYTES = 4;

class HeapOperatorListState<T> implements OperatorListState<T> {
  entries: T[] = [];
  constructor(readonly mode: OperatorStateDistributionMode) {}
  get(): T[] {
    return this.entries;
  }
  [Symbol.iterator](): Iterator<T> {
    return this.entries[Symbol.iterator]();
  }
  add(value: T): void {
    this.entries.push(value);
  }
  addAll(values: Iterable<T>): void {
    for (const v of values) this.entries.push(v);
  }
  update(values: Iterable<T>): void {
    this.entries = Array.from(values);
  }
  clear(): void {
    this.entries = [];
  }
}

export class OperatorStateBackend {
  readonly #states = new Map<string, HeapOperatorListState<unknown>>();
  readonly #packr = new Packr({ useRecords: false, useBigIntExtension: true });

  /**
   * The list state `name`. `mode` is fixed by the first call (or by restore); asking again with
   * another mode throws.
   */
  list<T>(name: string, mode: OperatorStateDistributionMode = 'even-split'): OperatorListState<T> {
    const s = this.#states.get(name);
    if (s !== undefined) {
      if (s.mode !== mode) {
        throw new StateAccessError(
          `operator state '${name}' is ${s.mode} state; it cannot be used as ${mode} state`,
        );
      }
      return s as HeapOperatorListState<T>;
    }
    if (mode !== 'even-split' && mode !== 'union')
      throw new RangeError(`unknown operator state mode ${mode}`);
    const created = new HeapOperatorListState<T>(mode);
    this.#states.set(name, created as HeapOperatorListState<unknown>);
    return created;
  }

  /** Synchronous snapshot: deep copies of all entries. O(operator state size). */
  snapshot(checkpointId: number): OperatorStateSnapshot {
    const states: Record<string, { mode: OperatorStateDistributionMode; entries: unknown[] }> = {};
    for (const [name, s] of this.#states) states[name] = { mode: s.mode, entries: copyValue(s.entries) };
    return { checkpointId, states };
  }

  /** Encodes a snapshot as msgpack + CRC-32 trailer, in a fresh buffer. */
  serialize(snapshot: OperatorStateSnapshot): Uint8Array {
    const payload = this.#packr.pack(snapshot);
    const bytes = new Uint8Array(payload.length + TRAILER_BYTES);
    bytes.set(payload, 0);
    new DataView(bytes.buffer).setUint32(payload.length, crc32(payload), true);
    return bytes;
  }

  /** Verifies and decodes serialized operator state. Throws CorruptStateError. */
  deserialize(bytes: Uint8Array): OperatorStateSnapshot {
    if (!(bytes instanceof Uint8Array) || bytes.length < TRAILER_BYTES + 1) {
      throw new CorruptStateError('operator state is too short');
    }
    const end = bytes.length - TRAILER_BYTES;
    const stored = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(end, true);
    if (stored !== crc32(bytes.subarray(0, end)))
      throw new CorruptStateError('operator state checksum mismatch');
    let decoded: unknown;
    try {
      decoded = this.#packr.unpack(bytes.subarray(0, end));
    } catch (err) {
      throw new CorruptStateError('operator state cannot be decoded', { cause: err });
    }
    const d = decoded as OperatorStateSnapshot;
    if (typeof d !== 'object' || d === null || typeof d.states !== 'object' || d.states === null) {
      throw new CorruptStateError('operator state has no states');
    }
    for (const [name, s] of Object.entries(d.states)) {
      if (!Array.isArray(s?.entries) || (s.mode !== 'even-split' && s.mode !== 'union')) {
        throw new CorruptStateError(`operator state '${name}' is malformed`);
      }
    }
    return d;
  }

  /**
   * Restores subtask `subtaskIndex` of `parallelism` from the snapshots of all old subtasks (in
   * old subtask order; serialized or not): each named state is redistributed by its mode.
   * Replaces all current operator state.
   */
  restore(
    oldSubtasks: readonly (OperatorStateSnapshot | Uint8Array)[],
    subtaskIndex: number,
    parallelism: number,
  ): void {
    if (!Number.isInteger(subtaskIndex) || subtaskIndex < 0 || subtaskIndex >= parallelism) {
      throw new RangeError(`subtaskIndex ${subtaskIndex} is outside [0, ${parallelism})`);
    }
    const snaps = oldSubtasks.map((s) => (s instanceof Uint8Array ? this.deserialize(s) : s));
    const modes = new Map<string, OperatorStateDistributionMode>();
    for (const s of snaps) {
      for (const [name, st] of Object.entries(s.states)) {
        const m = modes.get(name);
        if (m !== undefined && m !== st.mode) {
          throw new CorruptStateError(
            `operator state '${name}' has modes ${m} and ${st.mode} in one checkpoint`,
          );
        }
        modes.set(name, st.mode);
      }
    }
    this.#states.clear();
    for (const [name, mode] of modes) {
      const parts = snaps.map((s) => s.states[name]?.entries ?? []);
      const mine = redistributeOperatorState(parts, parallelism, mode)[subtaskIndex];
      const st = new HeapOperatorListState<unknown>(mode);
      st.entries = copyValue(mine);
      this.#states.set(name, st);
    }
  }

  stateNames(): string[] {
    return [...this.#states.keys()];
  }
}
