// The README's "Writing your own exactly-once sink" example: each checkpoint's records in one
// file per writer subtask, committed idempotently (deterministic name, temporary file + rename).
// Run: npx weir run examples/custom-sink.ts --checkpoint-interval 200 --arg out=./out
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineJob, sinks, sources } from 'weir';

function jsonFiles<T>(dir: string) {
  return sinks.custom<T, { records: T[] }>({
    name: 'json-files',
    createWriter() {
      let buffer: T[] = [];
      return {
        write(record) {
          buffer.push(record);
        },
        async preCommit() {
          const records = buffer; // before any await: later records belong to the next checkpoint
          buffer = [];
          return records.length > 0 ? { records } : undefined;
        },
      };
    },
    async commit({ records }, ctx) {
      // Deterministic name: a commit repeated after a restore rewrites the same file.
      const final = path.join(dir, `part-${ctx.subtaskIndex}-${ctx.checkpointId}.json`);
      await mkdir(dir, { recursive: true });
      await writeFile(`${final}.tmp`, JSON.stringify(records));
      await rename(`${final}.tmp`, final);
    },
    commitRetry: { retries: 5, backoffMs: 200 },
  });
}

export default defineJob((env, args) => {
  env
    .fromSource(sources.sequence({ from: 0, to: 10_000 }), 'numbers')
    .map((n: number) => ({ n, square: n * n }))
    .sinkTo(jsonFiles<{ n: number; square: number }>(args.out ?? './out'));
});
