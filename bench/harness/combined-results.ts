/** The JSON `weir bench` writes: the machine, the command, and every suite's own JSON. */

import type { MachineInfo } from './machine-info.js';
import type { SuiteReport } from './suite-report.js';

export interface SuiteRun {
  readonly name: string;
  /** The suite's command line, as run (relative to the package root). */
  readonly command: string;
  /** `failed`: the suite exited non-zero or wrote no JSON; `result` is then absent. */
  readonly status: 'ok' | 'failed';
  readonly exitCode: number | null;
  readonly durationMs: number;
  /** The suite's JSON, as it wrote it (with its `report`). */
  readonly result?: { readonly report?: SuiteReport } & Record<string, unknown>;
  readonly error?: string;
}

export interface CombinedResults {
  readonly benchmark: 'weir bench';
  /** How it was invoked, e.g. `weir bench --quick`. */
  readonly command: string;
  readonly quick: boolean;
  readonly machine: MachineInfo;
  readonly suites: readonly SuiteRun[];
}
