/**
 * A binary min-heap of timers `(timestamp, key)`, ordered by timestamp and then by insertion
 * (so equal timestamps fire in registration order, deterministically within a run).
 *
 * The heap is an index only: the truth is the keyed timer state (see `InternalTimerService`).
 * Deletion is lazy: a deleted timer stays here and is skipped when popped because its state entry
 * is gone. Costs: `push`/`pop` O(log n), `peekTimestamp` O(1).
 */
export interface TimerEntry {
  readonly timestamp: number;
  readonly key: unknown;
  readonly seq: number;
}

export class TimerHeap {
  readonly #items: TimerEntry[] = [];
  #seq = 0;

  get size(): number {
    return this.#items.length;
  }

  /** Smallest timestamp, `Infinity` when empty. */
  peekTimestamp(): number {
    return this.#items.length === 0 ? Infinity : this.#items[0].timestamp;
  }

  push(timestamp: number, key: unknown): void {
    const items = this.#items;
    items.push({ timestamp, key, seq: this.#seq++ });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): TimerEntry | undefined {
    const items = this.#items;
    if (items.length === 0) return undefined;
    const top = items[0];
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && less(items[l], items[m])) m = l;
        if (r < items.length && less(items[r], items[m])) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top;
  }
}

function less(a: TimerEntry, b: TimerEntry): boolean {
  return a.timestamp < b.timestamp || (a.timestamp === b.timestamp && a.seq < b.seq);
}
