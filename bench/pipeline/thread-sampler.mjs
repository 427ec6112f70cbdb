// Per-thread scheduler figures of this process, sampled from /proc (Linux only), for the pipeline's
// per-thread CPU scripts (thread-cpu.mjs, thread-cpu-postmessage.mjs): which thread ran, which
// waited for a core (runnable, on the run queue) and which slept (parked, waiting for a message),
// over the whole run and over a steady window given afterwards.
//
// Per thread, from /proc/self/task/TID/schedstat: time on a CPU and time runnable but waiting for
// one (ns, exact, unlike the 10 ms ticks of /stat); from /status: voluntary context switches (the
// thread went to sleep: a park, an Atomics.wait, an idle event loop) and involuntary ones
// (preempted). Sleeping time = window − on CPU − waiting for a CPU. Every sample reads 2 files per
// thread (~20 threads, every 25 ms): that cost lands on the main thread, in every case alike.

import { readdirSync, readFileSync } from 'node:fs';

/** Wall-clock ms comparable across threads (each thread's timeOrigin is its own start). */
export function wallNow() {
  return performance.timeOrigin + performance.now();
}

function readThreads() {
  const out = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const [run, wait] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      const vol = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const invol = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      out.set(Number(tid), { run, wait, vol, invol });
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

/**
 * Starts sampling every `intervalMs`. `stop()` takes a last sample and returns the recorder:
 * `window(from, to)` (wall ms) gives per thread the deltas between the last sample at or before
 * `from` and the first at or after `to` (a thread that ended keeps its last reading; one that
 * started later counts from zero), plus the window's actual length.
 */
export function startThreadSampler(intervalMs = 25) {
  /** @type {{ at: number, threads: Map<number, {run:number, wait:number, vol:number, invol:number}> }[]} */
  const samples = [{ at: wallNow(), threads: readThreads() }];
  const timer = setInterval(() => samples.push({ at: wallNow(), threads: readThreads() }), intervalMs);
  return {
    stop() {
      clearInterval(timer);
      samples.push({ at: wallNow(), threads: readThreads() });
      return {
        samples,
        window(from, to) {
          let a = 0;
          while (a + 1 < samples.length && samples[a + 1].at <= from) a++;
          let b = samples.length - 1;
          while (b - 1 > a && samples[b - 1].at >= to) b--;
          const valueAt = (tid, index) => {
            for (let i = index; i >= 0; i--) {
              const v = samples[i].threads.get(tid);
              if (v) return v;
            }
            return { run: 0, wait: 0, vol: 0, invol: 0 };
          };
          const tids = new Set();
          for (let i = a; i <= b; i++) for (const tid of samples[i].threads.keys()) tids.add(tid);
          const threads = new Map();
          for (const tid of [...tids].sort((x, y) => x - y)) {
            const s = valueAt(tid, a);
            const e = valueAt(tid, b);
            // Last sample in the window at which the thread's CPU time still grew.
            let activeUntil = samples[a].at;
            for (let i = a + 1; i <= b; i++) {
              const v = samples[i].threads.get(tid);
              if (v && v.run > valueAt(tid, i - 1).run + 1e6) activeUntil = samples[i].at;
            }
            threads.set(tid, {
              activeUntilMs: activeUntil - samples[a].at,
              runMs: (e.run - s.run) / 1e6,
              waitMs: (e.wait - s.wait) / 1e6,
              vol: e.vol - s.vol,
              invol: e.invol - s.invol,
            });
          }
          return { ms: samples[b].at - samples[a].at, threads };
        },
      };
    },
  };
}

/**
 * Prints a window's table: per thread with ≥ `minMs` on a CPU, CPU ns per record, share of the
 * window on a CPU / runnable waiting / asleep, voluntary and involuntary switches; then the sum
 * (cores used = Σ CPU / window). 'last busy': when, as a share of the window, the thread last gained
 * ≥ 1 ms of CPU between two samples (a source that finished early stops there). `label(tid)` names a thread (optional).
 */
export function printWindow(title, w, records, label = () => '', minMs = 20) {
  const pct = (ms) => `${((100 * ms) / w.ms).toFixed(0).padStart(3)} %`;
  console.log(`  ${title}: ${w.ms.toFixed(0)} ms`);
  console.log('    thread            ns/rec  on-CPU  runq   asleep   vol-sw  invol-sw  last busy');
  let run = 0;
  let wait = 0;
  let vol = 0;
  let invol = 0;
  for (const [tid, t] of w.threads) {
    run += t.runMs;
    wait += t.waitMs;
    vol += t.vol;
    invol += t.invol;
    if (t.runMs < minMs) continue;
    const asleep = Math.max(0, w.ms - t.runMs - t.waitMs);
    console.log(
      `    ${`${tid} ${label(tid)}`.padEnd(16)} ${((t.runMs * 1e6) / records).toFixed(0).padStart(7)}  ${pct(t.runMs)}  ${pct(t.waitMs)}  ${pct(asleep)}  ${String(t.vol).padStart(7)}  ${String(t.invol).padStart(8)}  ${pct(t.activeUntilMs)}`,
    );
  }
  console.log(
    `    all threads      ${((run * 1e6) / records).toFixed(0).padStart(7)}  cores used ${(run / w.ms).toFixed(2)}, runnable-waiting ${(wait / w.ms).toFixed(2)} threads on average, ${vol} vol / ${invol} invol switches`,
  );
}

/**
 * Prints, per thread with ≥ `minMs` on a CPU in [from, to], its share of each of `slices` equal
 * slices of the window spent on a CPU and asleep (%, "cpu/asleep"; the rest of a slice it was
 * runnable, waiting for a core): a thread that starts late, stalls, parks or ends early shows.
 */
export function printTimeline(rec, from, to, slices = 10, label = () => '', minMs = 20) {
  const step = (to - from) / slices;
  const cuts = Array.from({ length: slices }, (_, i) => rec.window(from + i * step, from + (i + 1) * step));
  const whole = rec.window(from, to);
  console.log(`  on CPU / asleep, % of each of ${slices} slices of the window (${step.toFixed(0)} ms each):`);
  for (const [tid, t] of whole.threads) {
    if (t.runMs < minMs) continue;
    const row = cuts.map((w) => {
      const x = w.threads.get(tid) ?? { runMs: 0, waitMs: 0 };
      const asleep = Math.max(0, w.ms - x.runMs - x.waitMs);
      return `${Math.round((100 * x.runMs) / w.ms)}/${Math.round((100 * asleep) / w.ms)}`.padStart(8);
    });
    console.log(`    ${`${tid} ${label(tid)}`.padEnd(16)}${row.join('')}`);
  }
}
