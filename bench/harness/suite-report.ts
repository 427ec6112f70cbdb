/**
 * The part of a suite's JSON that `weir bench` renders without knowing the suite: a title, the
 * command and machine, notes, tables (the rows the suite printed) and bar charts (ratios, mostly).
 * Every suite puts one under `report` in its JSON; `bench/harness/html.ts` draws it.
 */

import type { TableRow } from './print-table.js';

export interface ReportTable {
  readonly title: string;
  readonly rows: readonly TableRow[];
}

export interface ReportBar {
  readonly label: string;
  readonly value: number;
}

export interface ReportChart {
  readonly title: string;
  /** Suffix of the value labels, e.g. `×` or ` ms`. */
  readonly unit: string;
  readonly bars: readonly ReportBar[];
  /** A vertical rule, e.g. the baseline (1×) or a goal. */
  readonly reference?: { readonly value: number; readonly label: string };
}

export interface SuiteReport {
  readonly suite: string;
  readonly title: string;
  readonly command: string;
  /** `formatMachineInfo(machineInfo())` of the run. */
  readonly machine: string;
  readonly notes: readonly string[];
  readonly tables: readonly ReportTable[];
  readonly charts: readonly ReportChart[];
}

/** The command line of this process, as the user could paste it (relative script path). */
export function commandLine(defaultScript: string): string {
  return [
    'node',
    ...process.execArgv,
    process.argv[1] ? relativeScript(process.argv[1]) : defaultScript,
    ...process.argv.slice(2),
  ].join(' ');
}

function relativeScript(script: string): string {
  const cwd = `${process.cwd()}/`;
  return script.startsWith(cwd) ? script.slice(cwd.length) : script;
}
