// The recorder lives with weir's report code (the demo uses it too); the harness re-exports it.
export * from '../../src/report/latency-recorder.js';
