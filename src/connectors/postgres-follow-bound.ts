/**
 * The bound up to which `sources.postgres` in incrementing mode may read: the greatest value of
 * the incrementing column below which no transaction can still commit a row. A pure state machine
 * over what the source's probe observes; the reader does the I/O.
 *
 * Why a bound at all: values come from a sequence when a row is inserted, not when its transaction
 * commits. Transaction A takes id 5, B takes 6 and commits first; a reader that read 6 and moved
 * its position past it would never see 5 (the known hole of Kafka Connect JDBC's incrementing mode).
 *
 * The rule, from three probes (`pg_current_snapshot()` and `max(column)` in one statement):
 * 1. probe k sees `max = M`: every value ≤ M was handed out before probe k, to a transaction that
 *    had committed, had aborted or was still running then;
 * 2. probe k+1 (one poll interval later) notes its snapshot's `xmax X`: every transaction that
 *    had a transaction id by then has one below X. A transaction that took a value at probe k has
 *    had one since its first write, which follows the `nextval()` within the same INSERT;
 * 3. the first later probe whose oldest running transaction `xmin` is ≥ X makes M safe: each
 *    transaction below X has ended, so no row with a value ≤ M can appear any more.
 * The one case it does not cover: a transaction that takes a value (`SELECT nextval(...)`) and
 * writes it more than a poll interval later (no transaction id at probe k+1).
 *
 * Cost: a row is read two to three poll intervals after its commit; a long-running writing
 * transaction holds the bound back (rows wait, none is lost) until it ends.
 */
export class FollowBound {
  /** The greatest value known safe to read through; `null` until the first bound. */
  #safe: bigint | null = null;
  /** The newest `max` waiting to become safe, and the `xmax` of the probe after the one that saw it. */
  #candidate: { readonly max: bigint; xmax: bigint | null } | null = null;

  get safe(): bigint | null {
    return this.#safe;
  }

  /** A greater value has been seen and is waiting to become safe. */
  get pending(): boolean {
    return this.#candidate !== null;
  }

  /**
   * Takes one probe: the snapshot's `xmin` and `xmax` and the column's `max` (`null`: empty
   * table). Returns whether the safe bound grew.
   */
  observe(xmin: bigint, xmax: bigint, max: bigint | null): boolean {
    if (xmin > xmax) throw new RangeError(`snapshot xmin ${xmin} is above its xmax ${xmax}`);
    let advanced = false;
    const c = this.#candidate;
    if (c !== null) {
      if (c.xmax === null) c.xmax = xmax;
      else if (xmin >= c.xmax) {
        this.#safe = c.max;
        this.#candidate = null;
        advanced = true;
      }
    }
    if (this.#candidate === null && max !== null && (this.#safe === null || max > this.#safe)) {
      this.#candidate = { max, xmax: null };
    }
    return advanced;
  }
}
