#!/usr/bin/env node
// The `weir` command. The CLI is compiled TypeScript in dist/; `npm run build` makes it.
import { main } from '../dist/cli/main.js';

let settled = false;
main(process.argv.slice(2)).then(
  (code) => {
    settled = true;
    process.exitCode = code;
  },
  (err) => {
    settled = true;
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exitCode = 1;
  },
);
// Node exits with code 0 and no output when the event loop empties while the command still
// awaits something (a promise nothing will settle): never a silent success. A command that
// reports this itself (weir verify) sets the exit code first.
process.on('exit', () => {
  if (settled || process.exitCode) return;
  process.stderr.write(
    `weir ${process.argv[2] ?? ''}: ended without finishing: nothing was left to run while the command still awaited a result (a promise that never settles); this is a bug, please report it\n`,
  );
  process.exitCode = 1;
});
