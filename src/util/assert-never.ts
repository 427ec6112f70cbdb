/**
 * The exhaustiveness check that ends every `switch` over a closed union keyed on `kind` (house
 * style rule 3): the call only type-checks when every member was handled, and throws if a value
 * outside the union arrives at run time anyway (e.g. from another thread's message).
 */
export function assertNever(value: never, what = 'value'): never {
  throw new TypeError(`unexpected ${what}: ${JSON.stringify(value)}`);
}
