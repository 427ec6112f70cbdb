/** Identity of one subtask of one job vertex (a chain of operators). */
export interface TaskId {
  readonly vertexId: number;
  readonly subtaskIndex: number;
}

/** Readable form used in logs and errors: `map -> filter (2/4)`, or `vertex 3 (2/4)` without a name. */
export function formatTaskId(id: TaskId, name?: string, parallelism?: number): string {
  const who = name ?? `vertex ${id.vertexId}`;
  return parallelism === undefined
    ? `${who} [${id.vertexId}#${id.subtaskIndex}]`
    : `${who} (${id.subtaskIndex + 1}/${parallelism})`;
}

/** Stable string key, for maps keyed by task. */
export function taskKey(id: TaskId): string {
  return `${id.vertexId}/${id.subtaskIndex}`;
}
