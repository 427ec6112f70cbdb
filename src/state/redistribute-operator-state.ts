/**
 * Redistribution of operator (non-keyed) list state when a job is restored at another
 * parallelism. A pure function: the same input always gives the same assignment.
 */

/**
 * How a named operator list state is redistributed on restore (Flink's `getListState` vs
 * `getUnionListState`):
 * - `even-split`: all old subtasks' entries are concatenated in subtask order and split into
 *   `newParallelism` contiguous slices whose sizes differ by at most one (the first
 *   `total mod newParallelism` slices get one more).
 * - `union`: every new subtask gets all entries (in old subtask order).
 */
export type OperatorStateDistributionMode = 'even-split' | 'union';

export function redistributeOperatorState(
  oldPerSubtask: readonly (readonly unknown[])[],
  newParallelism: number,
  mode: OperatorStateDistributionMode,
): unknown[][] {
  if (!Number.isInteger(newParallelism) || newParallelism < 1) {
    throw new RangeError(`newParallelism must be a positive integer, got ${newParallelism}`);
  }
  const all: unknown[] = [];
  for (const part of oldPerSubtask) for (const e of part) all.push(e);
  switch (mode) {
    case 'union':
      return Array.from({ length: newParallelism }, () => all.slice());
    case 'even-split': {
      const out: unknown[][] = [];
      const base = Math.floor(all.length / newParallelism);
      const extra = all.length % newParallelism;
      let at = 0;
      for (let i = 0; i < newParallelism; i++) {
        const n = base + (i < extra ? 1 : 0);
        out.push(all.slice(at, at + n));
        at += n;
      }
      return out;
    }
    default: {
      const never: never = mode;
      throw new RangeError(`unknown operator state distribution mode ${String(never)}`);
    }
  }
}
