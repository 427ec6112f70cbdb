// Job takeover on the real NATS server (issue 17 goal: instance death → processing again on the
// survivors ≤ 5 s, the detection timeout configurable). Per round: a fresh cluster of `instances`
// child processes (bench/cluster/takeover-instance.mjs) runs bench/jobs/takeover-job.mjs (a paced
// source → keyed count → sink at parallelism = instances, checkpoints every 200 ms); after two
// committed checkpoints one instance gets SIGKILL (a member other than the coordinator, or with
// --victim coordinator the coordinator), and the round times, from the kill:
//   detect   → the first survivor logs the member's timeout (cluster-job.ts, at detection);
//   deployed → every survivor deployed attempt 1 (assignment published, state read, threads started);
//   running  → every survivor's tasks of attempt 1 run (the log record cluster-job.ts writes);
//   first    → the first record processed by a sink subtask of attempt 1 (the job's flag file):
//              "processing again".
// and splits total = first into detection (kill → detect) and redeploy (detect → first), with the
// CPU the busiest survivor spent on the redeploy (process.cpuUsage, every thread, from its
// detection to its tasks running: what load stretches into wall time). A round in which a live
// member is timed out too (a flap: short timeouts under heavy load) is reported as failed. Rounds
// of the given timeouts are interleaved (round 1 of each, then round 2 …), so the machine's load
// is spread alike. Prints one line per round and a table of medians (min–max) per timeout, the
// load average and UTC times; writes bench/results/takeover.json.
//   npm run build && node bench/cluster/takeover.mjs [--rounds 3] [--timeouts 1000,2000,3000]
//     [--instances 3] [--victim member|coordinator|both] [--rate 2000]
import { fork } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { coordinatorBucket, membersBucket } from '../../dist/cluster/cluster-options.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const HOST = path.join(here, 'takeover-instance.mjs');
const JOB = pathToFileURL(path.join(here, '../jobs/takeover-job.mjs')).href;
const SERVERS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const { values: a } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    timeouts: { type: 'string', default: '1000,2000,3000' },
    instances: { type: 'string', default: '3' },
    victim: { type: 'string', default: 'member' },
    rate: { type: 'string', default: '2000' },
  },
});
const rounds = Number(a.rounds);
const timeouts = a.timeouts.split(',').map(Number);
const instances = Number(a.instances);
const victims = a.victim === 'both' ? ['member', 'coordinator'] : [a.victim];
const wallNow = () => performance.timeOrigin + performance.now();
const utc = () => new Date().toISOString().slice(0, 19).replace('T', ' ');
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

async function round(timeoutMs, victimKind, r) {
  const dir = mkdtempSync(path.join(tmpdir(), 'weir-takeover-'));
  const name = `bench_takeover_${process.pid}_${r}_${timeoutMs}_${victimKind}`;
  const events = [];
  let wake = () => undefined;
  let failure = null;
  const children = [];
  const until = async (what, pred, ms = 120_000) => {
    const deadline = wallNow() + ms; // a bench may give up; tests may not
    while (!pred()) {
      if (failure) throw new Error(`${what}: ${failure}`);
      if (wallNow() > deadline)
        throw new Error(
          `${what}: gave up after ${ms} ms; events: ${events.map((e) => `${e.i}:${e.kind}${e.attempt ?? ''}`).join(' ')}`,
        );
      await new Promise((res) => {
        wake = res;
        setTimeout(res, 20); // also polls the flag files
      });
    }
  };
  try {
    for (let i = 0; i < instances; i++) {
      const child = fork(HOST, [
        JSON.stringify({
          job: JOB,
          options: {
            parallelism: instances,
            args: { dir, rate: a.rate, afterRestore: '5000' },
            checkpointing: { interval: 200, dir: path.join(dir, 'checkpoints') },
            cluster: { servers: SERVERS, name, instances, timeoutMs },
          },
        }),
      ]);
      child.on('message', (m) => {
        events.push({ ...m, i });
        if (m.kind === 'error') failure = `instance ${i}: ${m.message}`;
        wake();
      });
      child.on('exit', (code, signal) => {
        if (!child.killedByBench) failure ??= `instance ${i} exited (${code ?? signal})`;
        wake();
      });
      children.push(child);
    }
    const of = (kind, pred = () => true) => events.filter((e) => e.kind === kind && pred(e));
    await until('deployed', () => of('deployed').length === instances);
    await until('two checkpoints', () => of('checkpoint').length >= 2);
    const startup =
      Math.max(...of('running', (e) => e.attempt === 0).map((e) => e.at)) -
      Math.max(...of('deployed', (e) => e.attempt === 0).map((e) => e.at));
    const coordinator = of('checkpoint')[0].i;
    const victim = victimKind === 'coordinator' ? coordinator : (coordinator + 1) % instances;
    const survivors = children.map((_, i) => i).filter((i) => i !== victim);
    children[victim].killedByBench = true;
    const killAt = wallNow();
    children[victim].kill('SIGKILL');
    const firstFiles = () => readdirSync(dir).filter((f) => f.startsWith('first-1-'));
    await until('every survivor redeployed', () =>
      survivors.every((i) => of('deployed', (e) => e.i === i && e.attempt === 1).length > 0),
    );
    await until('a record processed again', () => firstFiles().length > 0);
    const detectAt = Math.min(...of('timedout').map((e) => e.at));
    const deployedAt = Math.max(...of('deployed', (e) => e.attempt === 1).map((e) => e.at));
    await until(
      'every survivor running',
      () => of('running', (e) => e.attempt === 1).length === survivors.length,
    );
    const runningAt = Math.max(...of('running', (e) => e.attempt === 1).map((e) => e.at));
    // CPU the survivors spent from their detection to their tasks running (all their threads):
    // the redeploy's cost, which the machine's load stretches into wall time.
    const cpuOf = (kind, i, pred = () => true) => of(kind, (e) => e.i === i && pred(e))[0]?.cpu;
    const redeployCpu = survivors.map(
      (i) => cpuOf('running', i, (e) => e.attempt === 1) - (cpuOf('timedout', i) ?? cpuOf('restarting', i)),
    );
    const firstAt = Math.min(...firstFiles().map((f) => Number(readFileSync(path.join(dir, f), 'utf8'))));
    return {
      timeoutMs,
      victim: victimKind,
      detect: detectAt - killAt,
      deployed: deployedAt - killAt,
      running: runningAt - killAt,
      startup,
      redeployCpu: Math.max(...redeployCpu),
      first: firstAt - killAt,
      redeploy: firstAt - detectAt,
      load: loadavg()[0],
    };
  } finally {
    for (const c of children) {
      c.killedByBench = true;
      c.kill('SIGKILL');
    }
    const nc = await connect({ servers: SERVERS });
    const kvm = new Kvm(nc);
    for (const b of [membersBucket(name), coordinatorBucket(name)])
      await kvm
        .open(b)
        .then((kv) => kv.destroy())
        .catch(() => undefined);
    await nc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const startedAt = utc();
const startLoad = load();
console.log(
  `${startedAt} UTC, load ${startLoad}; ${instances} instances, timeouts ${timeouts.join('/')} ms, victim ${victims.join('/')}, ${rounds} rounds`,
);
const results = [];
const failed = [];
for (let r = 0; r < rounds; r++)
  for (const t of timeouts)
    for (const v of victims) {
      let x;
      try {
        x = await round(t, v, r);
      } catch (e) {
        // Under heavy load a short timeout times out live members too (a flap): reported, not timed.
        failed.push({ timeoutMs: t, victim: v, round: r + 1, error: e.message });
        console.log(`round ${r + 1} timeout ${t} ${v}: FAILED: ${e.message.slice(0, 300)}`);
        continue;
      }
      results.push(x);
      const f = (ms) => `${Math.round(ms)}`.padStart(5);
      console.log(
        `round ${r + 1} timeout ${String(t).padStart(5)} ${v.padEnd(11)} detect ${f(x.detect)}  deployed ${f(x.deployed)}  running ${f(x.running)}  first record ${f(x.first)} ms (redeploy ${f(x.redeploy)}; first deployment → running ${f(x.startup)}; redeploy CPU per survivor ≤ ${f(x.redeployCpu)})  load ${x.load.toFixed(1)}`,
      );
    }
const med = (xs) => {
  const s = [...xs].sort((p, q) => p - q);
  const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return `${Math.round(m)} (${Math.round(s[0])}–${Math.round(s.at(-1))})`;
};
console.log(
  `\nmedian (min–max) ms from the kill; ended ${utc()} UTC, load ${load()}; failed rounds: ${failed.length}`,
);
console.log(
  '| timeoutMs | victim | detection | survivors deployed | tasks running on the survivors | first record again (takeover) | redeploy (detection → first record) | redeploy CPU, busiest survivor |',
);
console.log('|---:|---|---:|---:|---:|---:|---:|---:|');
for (const t of timeouts)
  for (const v of victims) {
    const xs = results.filter((x) => x.timeoutMs === t && x.victim === v);
    if (xs.length === 0) continue;
    console.log(
      `| ${t} | ${v} | ${med(xs.map((x) => x.detect))} | ${med(xs.map((x) => x.deployed))} | ${med(xs.map((x) => x.running))} | ${med(xs.map((x) => x.first))} | ${med(xs.map((x) => x.redeploy))} | ${med(xs.map((x) => x.redeployCpu))} |`,
    );
  }
const out = path.join(here, '../results');
if (!existsSync(out)) mkdirSync(out, { recursive: true });
writeFileSync(
  path.join(out, 'takeover.json'),
  JSON.stringify(
    { startedAt, startLoad, endedAt: utc(), node: process.version, instances, results },
    null,
    2,
  ),
);
