// The benchmark harness: re-exports only. See each file for what it measures and why.
export { BENCH_ARGS_USAGE, type BenchArgs, parseBenchArgs } from './bench-args.js';
export {
  LatencyRecorder,
  type LatencyRecorderOptions,
  type LatencySummary,
} from './latency-recorder.js';
export { formatMachineInfo, type MachineInfo, machineInfo } from './machine-info.js';
export { formatRate, formatRatio, formatTable, printTable, type TableRow } from './print-table.js';
export {
  type BenchCase,
  type CaseStats,
  type InterleavedResult,
  type InterleaveOptions,
  runInterleaved,
  type Sample,
  type Spread,
} from './run-interleaved.js';
export { max, median, min } from './stats.js';
export { resultsPath, writeJson } from './write-json.js';
