/**
 * Default operator uids, and which operators hold state.
 *
 * State is matched to operators by uid on restore, so a default uid must survive the edits users
 * make between runs. Positional ids (`map-3`: the fourth operator created) do not: inserting one
 * `.filter` before a keyed operator renamed it, and its state silently found no home. A default
 * uid here is the operator's uid kind, its name and its ordinal among the operators of the same
 * kind and name (in creation order), e.g. `keyed-process:running count:0`. Inserting, removing or
 * reordering stateless operators (map, filter, flatMap, process, unkeyed connect) never changes
 * the uid of a stateful one, because they never share its kind. Renaming a stateful operator, or
 * adding one of the same kind and name before it, does change it; restore then refuses (state
 * without a home, {@link NonRestoredStateError}) rather than dropping it. An explicit `.uid()`
 * survives every edit, which is why the runtime warns about stateful operators without one.
 *
 * Checkpoints written before this scheme (no `defaultUidScheme` in their metadata) used
 * `${kind}-${nodeId}`; {@link legacyUidOf} gives that id for a node so restore can map them.
 */

import type { OperatorSpec } from './stream-graph.js';

/** Recorded in checkpoint metadata (`job.defaultUidScheme`); absent in checkpoints of older runs. */
export const DEFAULT_UID_SCHEME = 2;

/**
 * Whether an operator of this spec snapshots state (operator state, keyed state or timers):
 * sources (positions), sinks (pending transactions), timestamp assigners (their watermark),
 * `mapAsync` (records in flight), and keyed operators. A stateless operator's uid never matters for restore.
 */
export function isStatefulOperator(spec: OperatorSpec): boolean {
  switch (spec.kind) {
    case 'source':
    case 'sink':
    case 'assign-timestamps':
    case 'keyed-process':
    case 'keyed-reduce':
    case 'window':
    case 'interval-join':
    case 'async': // its snapshot holds the records whose results are not emitted yet
      return true;
    case 'co-process':
      return spec.keySelectors !== undefined;
    case 'map':
    case 'filter':
    case 'flat-map':
    case 'process':
      return false;
    default: {
      const unreachable: never = spec;
      return unreachable;
    }
  }
}

/** The kind part of a default uid: a keyed connect is another kind than an unkeyed one. */
function uidKindOf(spec: OperatorSpec): string {
  return spec.kind === 'co-process' && spec.keySelectors !== undefined ? 'keyed-co-process' : spec.kind;
}

/**
 * Default uids for `nodes` (in creation order): `${kind}:${name}:${ordinal}`, the ordinal
 * counting earlier nodes of the same uid kind and name. O(nodes).
 */
export function defaultUids(
  nodes: readonly { readonly name: string; readonly spec: OperatorSpec }[],
): string[] {
  const seen = new Map<string, number>();
  return nodes.map((node) => {
    const base = `${uidKindOf(node.spec)}:${node.name}`;
    const ordinal = seen.get(base) ?? 0;
    seen.set(base, ordinal + 1);
    return `${base}:${ordinal}`;
  });
}

/** The uid a node had under the positional scheme of checkpoints written before scheme 2. */
export function legacyUidOf(node: {
  readonly nodeId: number;
  readonly uid: string;
  readonly explicitUid?: boolean;
  readonly spec: OperatorSpec;
}): string {
  return node.explicitUid ? node.uid : `${node.spec.kind}-${node.nodeId}`;
}
