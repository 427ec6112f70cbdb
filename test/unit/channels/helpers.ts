/** Shared helpers for the channel tests: same-thread channel pairs and frame draining. */
import { ChannelWriter, type ChannelWriterOptions } from '../../../src/channels/channel-writer.js';
import { Doorbell } from '../../../src/channels/doorbell.js';
import type { Frame } from '../../../src/channels/frame.js';
import { type GateFrame, InputGate } from '../../../src/channels/input-gate.js';
import { RingBuffer } from '../../../src/channels/ring-buffer.js';

export interface Channels {
  readonly rings: SharedArrayBuffer[];
  readonly doorbell: SharedArrayBuffer;
  readonly writers: ChannelWriter[];
  readonly gate: InputGate;
}

/** `n` channels into one gate, both ends on this thread. */
export function channels(n: number, capacity = 4096, options: ChannelWriterOptions = {}): Channels {
  const rings = Array.from({ length: n }, () => RingBuffer.allocate(capacity));
  const doorbell = Doorbell.allocate();
  const writers = rings.map((ring) => new ChannelWriter(ring, doorbell, options));
  return { rings, doorbell, writers, gate: new InputGate(rings, doorbell) };
}

/** Polls the gate until it has nothing ready; returns what it got. */
export function drain(gate: InputGate): GateFrame[] {
  const out: GateFrame[] = [];
  for (let f = gate.pollNext(); f !== null; f = gate.pollNext()) out.push(f);
  return out;
}

/** Records and control frames flattened into one logical stream. */
export type Item = { readonly record: unknown } | { readonly control: Frame };

export function flatten(frames: readonly Frame[]): Item[] {
  const items: Item[] = [];
  for (const frame of frames) {
    if (frame.kind === 'records') for (const record of frame.records) items.push({ record });
    else items.push({ control: frame });
  }
  return items;
}

/** Decoded binary values are Buffers; compare them as plain Uint8Arrays. */
export function normalize(value: unknown): unknown {
  if (value instanceof Uint8Array) return Uint8Array.from(value);
  if (Array.isArray(value)) return value.map(normalize);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [normalize(k), normalize(v)]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  }
  return value;
}
