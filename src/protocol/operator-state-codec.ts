/**
 * The codec of operator-state chunks (`OPERATOR_STATE_CHUNK` in snapshot-chunks.ts): tasks write them
 * (worker/snapshot-storage.ts), the coordinator reads them when it plans a restore.
 */

import { Packr } from 'msgpackr';
import { encodeValue, msgpackValueOptions } from '../channels/msgpack-values.js';
import { ValueNotSerializableError } from '../errors.js';

/**
 * One codec for operator-state chunks, used by tasks (write) and the restore planner (read).
 * Operator state carries user values (a collect sink's sealed records, a custom sink's
 * committables), so it keeps them as keyed state does: Sets, BigInts, Dates, and with
 * {@link packOperatorState} -0 and Maps (msgpack-values.ts); a function is an error.
 */
export function operatorStatePackr(): Packr {
  return new Packr({ useRecords: false, useBigIntExtension: true, ...msgpackValueOptions('operator state') });
}

/**
 * Packs one operator's operator-state entries with {@link operatorStatePackr}'s codec, keeping -0
 * and Maps; a value that cannot be stored is a {@link ValueNotSerializableError} naming the operator.
 */
export function packOperatorState(
  packr: Packr,
  operatorUid: string,
  entries: readonly unknown[],
): Uint8Array {
  try {
    return packr.pack(encodeValue(entries, true));
  } catch (err) {
    if (err instanceof ValueNotSerializableError)
      throw new ValueNotSerializableError(`operator state of ${operatorUid}`, err.reason, {
        cause: err,
        operator: operatorUid,
      });
    throw err;
  }
}
