/**
 * The queue of an async operator (`mapAsync`), Flink's `StreamElementQueue`: records whose
 * results are not emitted yet, and the watermarks between them. Pure bookkeeping: no promises,
 * no timers, no user code. The operator adds elements in input order, marks records complete as
 * their requests settle, and polls what may be emitted now.
 *
 * Emission order:
 * - `ordered`: exactly input order. A record is emitted once it and every element before it
 *   were emitted; a watermark once every element before it was emitted.
 * - unordered: records as they complete, but never across a watermark. The elements are cut
 *   into segments at watermarks (Flink's unordered queue segments); only the first segment's
 *   completed records may be emitted, and its closing watermark is emitted once the segment has
 *   no record left, which opens the next segment. So a watermark is emitted only after every
 *   record before it, and no record after it overtakes it.
 *
 * Capacity counts records only (watermarks are not requests). `size` may exceed it: the task
 * checks it between input frames, so one frame's records can overshoot; the operator still
 * keeps at most `capacity` requests in flight (see async-wait-operator.ts).
 *
 * Costs: add O(1); complete O(1); poll O(emitted) amortised; pending() O(size log size).
 */

/** A record in the queue: its input, its event timestamp, its key (keyed), its results once complete. */
export interface QueueRecord {
  readonly kind: 'record';
  /** Position in the queue's input order: strictly increasing, starting at 0 per queue. */
  readonly seq: number;
  readonly input: unknown;
  readonly timestamp: number | undefined;
  readonly key: unknown;
  /** Set by {@link StreamElementQueue.complete}; `undefined` while the request is open. */
  results: readonly unknown[] | undefined;
}

/** What {@link StreamElementQueue.poll} hands out, in emission order. */
export type QueueEmission =
  | { readonly kind: 'record'; readonly record: QueueRecord }
  | { readonly kind: 'watermark'; readonly timestamp: number };

interface Segment {
  /** Records of the segment not emitted yet, open or complete. */
  readonly open: Set<QueueRecord>;
  /** Complete records of the segment, in completion order, not emitted yet. */
  readonly completed: QueueRecord[];
  /** The watermark that closes the segment; `undefined` for the last (open) segment. */
  watermark: number | undefined;
}

type OrderedEntry = QueueRecord | { readonly kind: 'watermark'; readonly timestamp: number };

export class StreamElementQueue {
  #nextSeq = 0;
  /** Records added and not yet emitted (polled). */
  #size = 0;
  /** Ordered mode: every element not emitted yet, in input order. */
  readonly #entries: OrderedEntry[] = [];
  #head = 0;
  /** Unordered mode: at least one segment; the last one has no watermark. */
  readonly #segments: Segment[] = [];
  /** Unordered mode: the segment of every record not emitted yet. */
  readonly #segmentOf = new Map<QueueRecord, Segment>();

  constructor(
    readonly capacity: number,
    readonly ordered: boolean,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be an integer >= 1, got ${capacity}`);
    }
    this.#segments.push(newSegment());
  }

  /** Records added and not yet emitted (open or complete). */
  get size(): number {
    return this.#size;
  }

  /** Whether the task may feed another input: fewer than `capacity` records are queued. */
  get hasCapacity(): boolean {
    return this.#size < this.capacity;
  }

  /** No record and no watermark left to emit. */
  get isEmpty(): boolean {
    if (this.ordered) return this.#head === this.#entries.length;
    return this.#segments.length === 1 && this.#size === 0;
  }

  /** Adds a record (never refused: capacity is the caller's decision, see the file header). */
  addRecord(input: unknown, timestamp: number | undefined, key: unknown = undefined): QueueRecord {
    const record: QueueRecord = {
      kind: 'record',
      seq: this.#nextSeq++,
      input,
      timestamp,
      key,
      results: undefined,
    };
    this.#size++;
    if (this.ordered) this.#entries.push(record);
    else {
      const segment = this.#segments[this.#segments.length - 1];
      segment.open.add(record);
      this.#segmentOf.set(record, segment);
    }
    return record;
  }

  /** Adds a watermark; it is emitted once every element before it was. */
  addWatermark(timestamp: number): void {
    if (this.ordered) {
      this.#entries.push({ kind: 'watermark', timestamp });
      return;
    }
    this.#segments[this.#segments.length - 1].watermark = timestamp;
    this.#segments.push(newSegment());
  }

  /** Marks `record` complete with its results. A record completes once; a second call is a bug. */
  complete(record: QueueRecord, results: readonly unknown[]): void {
    if (record.results !== undefined) throw new Error(`queue record ${record.seq} completed twice`);
    record.results = results;
    if (this.ordered) return;
    const segment = this.#segmentOf.get(record);
    if (segment === undefined) throw new Error(`queue record ${record.seq} is not in the queue`);
    segment.completed.push(record);
  }

  /** Removes and returns everything that may be emitted now, in emission order. */
  poll(): QueueEmission[] {
    const out: QueueEmission[] = [];
    if (this.ordered) {
      const entries = this.#entries;
      while (this.#head < entries.length) {
        const e = entries[this.#head];
        if (e.kind === 'record') {
          if (e.results === undefined) break;
          out.push({ kind: 'record', record: e });
          this.#size--;
        } else {
          out.push(e);
        }
        this.#head++;
      }
      // Compact once the emitted prefix dominates: amortised O(1) per element.
      if (this.#head > 64 && this.#head * 2 > entries.length) {
        entries.splice(0, this.#head);
        this.#head = 0;
      }
      return out;
    }
    for (;;) {
      const first = this.#segments[0];
      for (const record of first.completed) {
        first.open.delete(record);
        this.#segmentOf.delete(record);
        out.push({ kind: 'record', record });
        this.#size--;
      }
      first.completed.length = 0;
      if (first.open.size > 0 || first.watermark === undefined) return out;
      out.push({ kind: 'watermark', timestamp: first.watermark });
      this.#segments.shift();
    }
  }

  /**
   * Every record not emitted yet, open or complete, in input order: what a snapshot holds (their
   * requests are issued again after a restore). Watermarks are not part of it: after a restore
   * the watermark starts again from the inputs, as everywhere else in the task.
   */
  pending(): QueueRecord[] {
    if (this.ordered) {
      const out: QueueRecord[] = [];
      for (let i = this.#head; i < this.#entries.length; i++) {
        const e = this.#entries[i];
        if (e.kind === 'record') out.push(e);
      }
      return out;
    }
    const out: QueueRecord[] = [];
    for (const segment of this.#segments) for (const r of segment.open) out.push(r);
    return out.sort((a, b) => a.seq - b.seq);
  }
}

function newSegment(): Segment {
  return { open: new Set(), completed: [], watermark: undefined };
}
