// One instance of the takeover benchmark's cluster job (bench/cluster/takeover.mjs), a child
// process: runs the job with the `cluster` option through startJob and reports over IPC, each
// with `at` = wallNow() (comparable across processes on one machine) and `cpu` (this process's
// CPU ms so far, all threads): `deployed` (attempt),
// `timedout` (this instance saw a member of its run time out: the log record cluster-job.ts writes
// at detection), `running` (all its tasks of `attempt` run), `restarting`, `checkpoint` (it is the coordinator then), `result` / `error`.
// Waits for `{ cmd: 'exit' }`. Config (JSON in argv[2]): { job, options }.
import { startJob } from '../../dist/index.js';

const wallNow = () => performance.timeOrigin + performance.now();
const { job, options } = JSON.parse(process.argv[2]);
/** CPU ms of this process so far, every thread (process.cpuUsage). */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const send = (m) => process.send({ ...m, at: wallNow(), cpu: cpuMs() });
process.on('message', (m) => {
  if (m.cmd === 'exit') process.exit(0);
});
const quiet = () => undefined;
const logger = {
  debug: quiet,
  info: (fields, msg) => {
    if (msg === 'tasks running') send({ kind: 'running', attempt: fields.attempt });
  },
  error: quiet,
  warn: (fields, msg) => {
    if (msg === 'member timed out') send({ kind: 'timedout', instance: fields.instance });
  },
};
try {
  const client = await startJob(job, { ...options, logger });
  client.on('deployed', (e) => send({ kind: 'deployed', attempt: e?.attempt }));
  client.on('restarting', () => send({ kind: 'restarting' }));
  client.on('checkpoint', (stats) => send({ kind: 'checkpoint', checkpointId: stats.checkpointId }));
  const result = await client.done;
  send({ kind: 'result', status: result.status, restarts: result.restarts });
} catch (e) {
  send({ kind: 'error', message: String(e?.message), stack: String(e?.stack) });
}
