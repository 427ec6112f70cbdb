// Public entry point of weir: re-exports only.
export * from './errors.js';
export type * from './api/functions.js';
export type * from './api/source.js';
export type { CheckpointBarrier, CheckpointType, Frame } from './channels/frame.js';
