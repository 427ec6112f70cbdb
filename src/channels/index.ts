// The data plane: re-exports only.

export type {
  BufferDebloatOptions,
  DebloatDecision,
  DebloatState,
  ThroughputSample,
} from './buffer-debloater.js';
export {
  bufferDebloatOptions,
  DEFAULT_BUFFER_DEBLOAT,
  debloatStep,
  initialDebloatState,
} from './buffer-debloater.js';
export { ChannelReader } from './channel-reader.js';
export type { ChannelWriterOptions } from './channel-writer.js';
export {
  ChannelWriter,
  DEFAULT_BATCH_BYTES,
  DEFAULT_BATCH_RECORDS,
  DEFAULT_MAX_RECORD_BYTES,
} from './channel-writer.js';
export { Doorbell } from './doorbell.js';
export type {
  CancelCheckpointMarker,
  CheckpointBarrier,
  CheckpointType,
  ControlFrame,
  EndOfPartition,
  Frame,
  FrameKind,
  RecordsFrame,
  Watermark,
} from './frame.js';
export { assertNever } from './frame.js';
export type { GateFrame, InputGateOptions } from './input-gate.js';
export { DEFAULT_SPIN_MICROS, InputGate } from './input-gate.js';
export type { ParkOutcome } from './park.js';
export { RecordCodec } from './record-codec.js';
export type { FrameVisitor } from './ring-buffer.js';
export { RingBuffer } from './ring-buffer.js';
