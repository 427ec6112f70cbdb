/** The `weir` command: argument parsing and dispatch to subcommands. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  switch (command) {
    default:
      console.log('weir: stream processing for Node.js (work in progress; see README status)');
      return 0;
  }
}
