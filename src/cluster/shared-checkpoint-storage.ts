/**
 * Opens a cluster job's shared checkpoint directory, which several instances may be creating at
 * the same moment. LMDB's first open creates `data.mdb` empty and only then writes its meta pages;
 * another process that looks at the file in between finds it empty or short, which
 * `CheckpointStorage.open` reports as a damaged file (CheckpointFileDamagedError, its guard
 * against mapping a truncated file). Seen in the cluster e2e tests: three instances starting on a
 * new directory, one failed with "the file is empty (0 bytes)". So a damaged-file error is looked
 * at again, every {@link RETRY_EVERY_MS}, for `retryMs`: a store being created opens once its
 * creator wrote it; a file that is really damaged still fails the instance, `retryMs` later.
 *
 * Cost: nothing when the first open succeeds.
 */

import { mkdirSync } from 'node:fs';
import { CheckpointFileDamagedError } from '../errors.js';
import { CheckpointStorage } from '../state/storage/checkpoint-storage.js';

const RETRY_EVERY_MS = 25;

/**
 * The store in `dir`, created when there is none.
 * @param onRetry called before each wait (tests use it to finish the creation they simulate).
 * @throws CheckpointFileDamagedError when `data.mdb` still looks damaged after `retryMs`; the
 *   errors of `CheckpointStorage.open`.
 */
export async function openSharedCheckpointStorage(
  dir: string,
  retryMs = 2000,
  onRetry?: (error: CheckpointFileDamagedError) => void,
): Promise<CheckpointStorage> {
  mkdirSync(dir, { recursive: true });
  const deadline = Date.now() + retryMs;
  for (;;) {
    try {
      return CheckpointStorage.open(dir);
    } catch (e) {
      if (!(e instanceof CheckpointFileDamagedError) || Date.now() >= deadline) throw e;
      onRetry?.(e);
      await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
    }
  }
}
