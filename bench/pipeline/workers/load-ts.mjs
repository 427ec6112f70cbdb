// Worker entry shim: worker threads cannot load .ts by themselves (and do not inherit a parent's
// `--import tsx` hooks for the entry file), so this plain .mjs registers tsx's ESM loader in the
// worker and then imports the TypeScript worker module named in `workerData.entry` (a file URL).
// Cost: ~150–250 ms per worker start-up, which the baselines keep outside the timed region.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
