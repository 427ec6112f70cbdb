/**
 * The byte format of one key group's keyed state in one snapshot: the unit that storage persists
 * and that restore redistributes across subtasks.
 *
 * Layout (little-endian), self-describing and self-checking so a chunk needs no side metadata:
 * ```
 *  0  u8   magic 'W' (0x57)
 *  1  u8   magic 'K' (0x4b)
 *  2  u8   format version (1)
 *  3  u8   kind: 0 = full (replaces the key group), 1 = delta (applies on top)
 *  4  u32  key group
 *  8  f64  checkpointId
 * 16  f64  baseCheckpointId of a delta (NaN for a full chunk)
 * 24  ...  msgpack payload: ChunkSection[]
 * n-4 u32  CRC-32 of bytes [0, n-4)
 * ```
 * A section is `[stateName, stateKind, upserts, tombstones]` where `upserts` is a flat array
 * `[key, wireValue, expiresAt, ...]` (`expiresAt` 0 = no TTL) and `tombstones` a flat array of
 * keys deleted since the base.
 */

import type { Packr } from 'msgpackr';
import { encodeValue } from '../channels/msgpack-values.js';
import { KeyGroupCorruptError, ValueNotSerializableError } from '../errors.js';
import { crc32 } from './crc32.js';
import { hasDirectUpserts, type SectionToEncode, writeSectionsPayload } from './number-section-writer.js';
import { STATE_KINDS, type StateKind } from './state-entry.js';

/** One key group's state in one snapshot. `bytes` carries its own header and checksum. */
export interface KeyGroupChunk {
  readonly keyGroup: number;
  readonly bytes: Uint8Array;
}

export type ChunkKind = 'full' | 'delta';

export type ChunkSection = [name: string, kind: StateKind, upserts: unknown[], tombstones: unknown[]];

export interface DecodedChunk {
  readonly keyGroup: number;
  readonly kind: ChunkKind;
  readonly checkpointId: number;
  readonly baseCheckpointId: number | undefined;
  readonly sections: readonly ChunkSection[];
}

/**
 * Packs the sections, keeping -0 and Maps (msgpack-values.ts: one walk, a copy only of values
 * that need it). A value that cannot be packed (a function) is reported naming its state and
 * operator: on that error path only, each section is packed alone to find the state.
 */
function packSections(packr: Packr, sections: readonly SectionToEncode[], operatorName: string): Uint8Array {
  if (hasDirectUpserts(sections)) {
    // Number slots (heap backend) or stored bytes (lmdb): written directly; the other sections packed one by one.
    return writeSectionsPayload(packr, sections, (section) => packOneSection(packr, section, operatorName));
  }
  try {
    return packr.pack(encodeValue(sections, true));
  } catch (e) {
    for (const section of sections) {
      try {
        packr.pack(encodeValue(section, true));
      } catch (inner) {
        throw stateNotSerializable(section[0], operatorName, inner);
      }
    }
    throw e;
  }
}

function packOneSection(packr: Packr, section: SectionToEncode, operatorName: string): Uint8Array {
  try {
    return packr.pack(encodeValue(section, true));
  } catch (e) {
    throw stateNotSerializable(section[0], operatorName, e);
  }
}

/** The typed error for a state value that cannot be packed: names the state and its operator first. */
export function stateNotSerializable(
  state: string,
  operatorName: string,
  cause: unknown,
): ValueNotSerializableError {
  const reason =
    cause instanceof ValueNotSerializableError
      ? cause.reason
      : cause instanceof Error
        ? cause.message
        : String(cause);
  return new ValueNotSerializableError(`state "${state}" of operator ${operatorName}`, reason, {
    cause,
    operator: operatorName,
    state,
  });
}

const MAGIC_0 = 0x57;
const MAGIC_1 = 0x4b;
const FORMAT_VERSION = 1;
const HEADER_BYTES = 24;
const TRAILER_BYTES = 4;

/**
 * Encodes a chunk into a fresh, exactly-sized buffer (not a view of the Packr's shared buffer, so
 * storage may keep or transfer it). Cost: one msgpack encode + one copy + one CRC pass.
 */
export function encodeKeyGroupChunk(
  packr: Packr,
  keyGroup: number,
  kind: ChunkKind,
  checkpointId: number,
  baseCheckpointId: number | undefined,
  sections: readonly SectionToEncode[],
  operatorName = 'keyed operator',
): KeyGroupChunk {
  const payload = packSections(packr, sections, operatorName);
  const bytes = new Uint8Array(HEADER_BYTES + payload.length + TRAILER_BYTES);
  const view = new DataView(bytes.buffer);
  bytes[0] = MAGIC_0;
  bytes[1] = MAGIC_1;
  bytes[2] = FORMAT_VERSION;
  bytes[3] = kind === 'full' ? 0 : 1;
  view.setUint32(4, keyGroup, true);
  view.setFloat64(8, checkpointId, true);
  view.setFloat64(16, baseCheckpointId ?? Number.NaN, true);
  bytes.set(payload, HEADER_BYTES);
  const end = bytes.length - TRAILER_BYTES;
  view.setUint32(end, crc32(bytes.subarray(0, end)), true);
  return { keyGroup, bytes };
}

/**
 * Verifies and decodes a chunk. Throws {@link KeyGroupCorruptError} (naming the key group) on a
 * checksum mismatch, a bad header, a key group that disagrees with `chunk.keyGroup`, or an
 * undecodable payload.
 */
export function decodeKeyGroupChunk(packr: Packr, chunk: KeyGroupChunk): DecodedChunk {
  const { bytes, keyGroup } = chunk;
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER_BYTES + TRAILER_BYTES) {
    throw new KeyGroupCorruptError(keyGroup, `chunk too short (${bytes?.length ?? 'no'} bytes)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length - TRAILER_BYTES;
  const expected = view.getUint32(end, true);
  const actual = crc32(bytes.subarray(0, end));
  if (expected !== actual) {
    throw new KeyGroupCorruptError(
      keyGroup,
      `checksum mismatch (stored ${hex(expected)}, computed ${hex(actual)})`,
    );
  }
  if (bytes[0] !== MAGIC_0 || bytes[1] !== MAGIC_1) throw new KeyGroupCorruptError(keyGroup, 'bad magic');
  if (bytes[2] !== FORMAT_VERSION) {
    throw new KeyGroupCorruptError(keyGroup, `unsupported chunk format version ${bytes[2]}`);
  }
  if (bytes[3] > 1) throw new KeyGroupCorruptError(keyGroup, `unknown chunk kind ${bytes[3]}`);
  const storedGroup = view.getUint32(4, true);
  if (storedGroup !== keyGroup) {
    throw new KeyGroupCorruptError(keyGroup, `chunk holds key group ${storedGroup}`);
  }
  const base = view.getFloat64(16, true);
  let sections: unknown;
  try {
    sections = packr.unpack(bytes.subarray(HEADER_BYTES, end));
  } catch (err) {
    throw new KeyGroupCorruptError(keyGroup, 'payload cannot be decoded', { cause: err });
  }
  if (!Array.isArray(sections) || !sections.every(isSection)) {
    throw new KeyGroupCorruptError(keyGroup, 'payload is not a list of state sections');
  }
  return {
    keyGroup,
    kind: bytes[3] === 0 ? 'full' : 'delta',
    checkpointId: view.getFloat64(8, true),
    baseCheckpointId: Number.isNaN(base) ? undefined : base,
    sections: sections as ChunkSection[],
  };
}

function isSection(s: unknown): boolean {
  return (
    Array.isArray(s) &&
    s.length === 4 &&
    typeof s[0] === 'string' &&
    STATE_KINDS.includes(s[1]) &&
    Array.isArray(s[2]) &&
    s[2].length % 3 === 0 &&
    Array.isArray(s[3])
  );
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}
