// The async operator's queue as scripted sequences (add, complete, poll) plus a seeded random
// variant checked against the ordering rules: ordered = input order; unordered = completion
// order within watermark segments; watermarks after every earlier record; the snapshot
// (pending) = everything added and not emitted, in input order.
import { describe, expect, it } from 'vitest';
import {
  type QueueEmission,
  type QueueRecord,
  StreamElementQueue,
} from '../../../../src/worker/async-io/stream-element-queue.js';

/** Emissions as short strings: `r<input>` for a record (its results are [input]), `w<ts>` for a watermark. */
function show(emissions: QueueEmission[]): string[] {
  return emissions.map((e) => (e.kind === 'watermark' ? `w${e.timestamp}` : `r${String(e.record.input)}`));
}

function script(ordered: boolean) {
  const q = new StreamElementQueue(3, ordered);
  const recs = new Map<number, QueueRecord>();
  return {
    q,
    add: (x: number) => recs.set(x, q.addRecord(x, undefined)),
    wm: (ts: number) => q.addWatermark(ts),
    done: (x: number) => q.complete(recs.get(x)!, [x]),
    poll: () => show(q.poll()),
  };
}

describe('StreamElementQueue, ordered', () => {
  it('emits in input order whatever the completion order, watermarks in place', () => {
    const s = script(true);
    s.add(1);
    s.add(2);
    s.wm(10);
    s.add(3);
    s.done(2);
    expect(s.poll()).toEqual([]); // 1 still open: 2 waits
    s.done(3);
    expect(s.poll()).toEqual([]);
    s.done(1);
    expect(s.poll()).toEqual(['r1', 'r2', 'w10', 'r3']);
    expect(s.q.isEmpty).toBe(true);
  });

  it('a watermark on an empty queue is emitted at the next poll', () => {
    const s = script(true);
    s.wm(5);
    expect(s.q.isEmpty).toBe(false);
    expect(s.poll()).toEqual(['w5']);
    expect(s.q.isEmpty).toBe(true);
  });
});

describe('StreamElementQueue, unordered', () => {
  it('emits as completed within a segment; a watermark waits for every record before it', () => {
    const s = script(false);
    s.add(1);
    s.add(2);
    s.wm(10);
    s.add(3);
    s.add(4);
    s.done(2);
    s.done(4); // after the watermark: must not overtake it
    expect(s.poll()).toEqual(['r2']);
    s.done(1);
    expect(s.poll()).toEqual(['r1', 'w10', 'r4']);
    s.done(3);
    expect(s.poll()).toEqual(['r3']);
    expect(s.q.isEmpty).toBe(true);
  });

  it('consecutive watermarks with empty segments between them come out in order', () => {
    const s = script(false);
    s.add(1);
    s.wm(1);
    s.wm(2);
    s.add(2);
    s.done(2);
    expect(s.poll()).toEqual([]);
    s.done(1);
    expect(s.poll()).toEqual(['r1', 'w1', 'w2', 'r2']);
  });
});

describe('StreamElementQueue capacity', () => {
  for (const ordered of [true, false]) {
    it(`${ordered ? 'ordered' : 'unordered'}: counts records not emitted, not watermarks`, () => {
      const s = script(ordered);
      s.add(1);
      s.wm(1);
      s.add(2);
      expect(s.q.hasCapacity).toBe(true);
      s.add(3);
      expect(s.q.size).toBe(3);
      expect(s.q.hasCapacity).toBe(false);
      s.done(3); // complete but held back (ordered) or behind the watermark (unordered): still counted
      s.poll();
      expect(s.q.hasCapacity).toBe(false);
      s.done(1);
      s.poll();
      expect(s.q.size).toBe(ordered ? 2 : 1);
      expect(s.q.hasCapacity).toBe(true);
    });
  }

  it('rejects a capacity that is not a positive integer', () => {
    expect(() => new StreamElementQueue(0, true)).toThrow(RangeError);
    expect(() => new StreamElementQueue(1.5, false)).toThrow(RangeError);
  });
});

describe('StreamElementQueue snapshot (pending) and restore', () => {
  for (const ordered of [true, false]) {
    it(`${ordered ? 'ordered' : 'unordered'}: pending holds every unemitted record in input order, and a queue fed with them yields their results`, () => {
      const s = script(ordered);
      for (const x of [1, 2, 3, 4]) s.add(x);
      s.done(3); // complete, not emitted (1 is open)
      s.done(1);
      const emitted = s.poll();
      expect(emitted).toEqual(ordered ? ['r1'] : ['r3', 'r1']);
      const pending = s.q.pending().map((r) => r.input);
      expect(pending).toEqual(ordered ? [2, 3, 4] : [2, 4]);
      // restore: the pending inputs are issued again on a fresh queue
      const restored = new StreamElementQueue(3, ordered);
      const again = pending.map((x) => restored.addRecord(x, 7));
      for (const r of [...again].reverse()) restored.complete(r, [r.input]);
      const out = restored.poll();
      expect(show(out).sort()).toEqual(pending.map((x) => `r${x}`).sort());
      expect(out.every((e) => e.kind === 'record' && e.record.timestamp === 7)).toBe(true);
    });
  }

  it('completing a record twice is a bug and throws', () => {
    const s = script(true);
    s.add(1);
    s.done(1);
    expect(() => s.done(1)).toThrow(/completed twice/);
  });
});

/** Park–Miller style LCG: a deterministic stream in [0, 1). */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

describe('StreamElementQueue, seeded random sequences', () => {
  for (const ordered of [true, false]) {
    for (const seed of [1, 7, 42, 0x5eed]) {
      it(`${ordered ? 'ordered' : 'unordered'}, seed ${seed}: order rules, exactly-once, and pending() = added - emitted`, () => {
        const next = rng(seed);
        const q = new StreamElementQueue(1 + Math.floor(next() * 8), ordered);
        // the input order: records (numbers) and watermarks ('w<ts>')
        const input: (number | string)[] = [];
        const open: QueueRecord[] = [];
        const emitted: (number | string)[] = [];
        let x = 0;
        let ts = 0;
        const check = () => {
          const out = q.poll();
          for (const e of out)
            emitted.push(e.kind === 'watermark' ? `w${e.timestamp}` : (e.record.input as number));
          // pending() is exactly the records added and not emitted, in input order
          const done = new Set(emitted);
          expect(q.pending().map((r) => r.input)).toEqual(
            input.filter((e) => typeof e === 'number' && !done.has(e)),
          );
        };
        for (let step = 0; step < 400; step++) {
          const p = next();
          if (p < 0.4 && q.hasCapacity) {
            input.push(x);
            open.push(q.addRecord(x++, undefined));
          } else if (p < 0.5) {
            ts++;
            input.push(`w${ts}`);
            q.addWatermark(ts);
          } else if (p < 0.85 && open.length > 0) {
            const i = Math.floor(next() * open.length);
            const [r] = open.splice(i, 1);
            q.complete(r, [r.input]);
          } else {
            check();
          }
        }
        for (const r of open) q.complete(r, [r.input]);
        check();
        expect(q.isEmpty).toBe(true);
        // every element emitted exactly once
        expect([...emitted].sort()).toEqual([...input].sort());
        if (ordered) {
          expect(emitted).toEqual(input);
        } else {
          // watermarks in input order, and every element sits in the same watermark segment as in the input
          const segment = (seq: (number | string)[]) => {
            const m = new Map<number | string, number>();
            let k = 0;
            for (const e of seq) {
              if (typeof e === 'string') k++;
              m.set(e, k);
            }
            return m;
          };
          expect(emitted.filter((e) => typeof e === 'string')).toEqual(
            input.filter((e) => typeof e === 'string'),
          );
          const want = segment(input);
          const got = segment(emitted);
          for (const e of input) expect(got.get(e), String(e)).toBe(want.get(e));
        }
      });
    }
  }
});
