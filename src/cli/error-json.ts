/** An error as JSON for `--json` output: name, code, message and its cause chain. */
export function errorJson(e: unknown): unknown {
  if (!(e instanceof Error)) return { message: String(e) };
  return {
    name: e.name,
    code: (e as { code?: string }).code,
    message: e.message,
    cause: e.cause === undefined ? undefined : errorJson(e.cause),
  };
}
