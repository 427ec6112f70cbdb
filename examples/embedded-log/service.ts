// The embedded-log pattern: a Node HTTP service appends every request to weir's embedded log (no
// broker), and a weir job in the same process consumes the log exactly-once into committed files.
// Kill the process at any time: the next start resumes from the last checkpoint, and the log still
// holds every request the service acknowledged.
//
//   npx tsx examples/embedded-log/service.ts      then   curl localhost:8080/some/page?user=ada
import http from 'node:http';
import { openLog, startJob } from 'weir';

const data = process.env.WEIR_DATA ?? './weir-data';
const log = openLog(`${data}/log`);
const pageViews = log.topic('page-views', { partitions: 4 });

const job = await startJob(new URL('./page-views-job.ts', import.meta.url), {
  parallelism: 2,
  args: { data },
  checkpointing: { interval: 1000, mode: 'exactly-once', dir: `${data}/checkpoints` },
  restoreFrom: 'latest', // resume after a restart of the service (a fresh start the first time)
  restartStrategy: { type: 'exponential-delay', initial: 100, max: 10_000 },
});
job.on('restarting', (e: { cause: Error }) => console.error('job restarting:', e.cause.message));

http
  .createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const view = { page: url.pathname, user: url.searchParams.get('user') ?? 'anonymous', at: Date.now() };
    // Durable once this resolves (one LMDB transaction); keyed by page so a page stays in order.
    await pageViews.append([view], { key: view.page });
    res.end('ok\n');
  })
  .listen(Number(process.env.PORT ?? 8080));

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await job.stopWithSavepoint(`${data}/savepoint-${Date.now()}`).catch(() => job.cancel());
    await log.close();
    process.exit(0);
  });
}
