/**
 * Deep copy of a state value, used by copy-on-write to give a snapshot its own copy of a value
 * that user code may mutate after the barrier.
 *
 * Cost: O(size of the value). Primitives are returned as they are (they are immutable); arrays
 * and plain objects are copied by a recursive loop (several times faster than `structuredClone`
 * for small records); anything else (Date, typed arrays, Map, Set, class instances) goes through
 * `structuredClone`. Values must be acyclic: state is msgpack-encoded without cycle support, so a
 * cyclic value could not be snapshotted anyway (a cycle here overflows the stack).
 */
export function copyValue<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const n = value.length;
    const out = new Array(n);
    for (let i = 0; i < n; i++) out[i] = copyValue(value[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    const out: Record<string, unknown> = proto === null ? Object.create(null) : {};
    for (const k in value) out[k] = copyValue((value as Record<string, unknown>)[k]);
    return out as T;
  }
  return structuredClone(value);
}

/** True when a value can be mutated in place (and so must be copied before user code sees it). */
export function isMutable(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
