import type { Sink, SinkWriter } from '../api/source.js';

/** Writes every record as one JSON line to stdout. Not transactional: may repeat after a restart. */
export function stdout<T = unknown>(): Sink<T> {
  return {
    type: 'stdout',
    name: 'stdout',
    createWriter(): SinkWriter<T> {
      let lines: string[] = [];
      const flush = () => {
        if (lines.length === 0) return;
        process.stdout.write(`${lines.join('\n')}\n`);
        lines = [];
      };
      return {
        write(value: T) {
          lines.push(JSON.stringify(value));
          if (lines.length >= 256) flush();
        },
        preCommit() {
          flush();
          return [];
        },
        finish: flush,
      };
    },
  };
}
