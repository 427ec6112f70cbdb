/**
 * A command line the CLI cannot act on (unknown command or flag, a bad value): the command prints
 * it with the usage and exits 2. CLI-only, so not in the `errors.ts` catalogue: it never reaches
 * the API, and a job never runs when one is thrown.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
