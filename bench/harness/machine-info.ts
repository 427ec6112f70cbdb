/**
 * The machine a benchmark ran on, recorded next to every result (STYLE rule 11): figures from
 * different machines or Node versions are not comparable, so every table and JSON file carries them.
 */

import os from 'node:os';

export interface MachineInfo {
  /** CPU model string of the first logical CPU, as the OS reports it. */
  readonly cpuModel: string;
  /** `os.availableParallelism()`: the number of threads Node thinks it may run at once. */
  readonly cores: number;
  /** Total physical memory in GiB (two decimals). */
  readonly memoryGiB: number;
  /** `process.version`, e.g. `v20.20.2`. */
  readonly node: string;
  /** V8 version; JIT behaviour (and so throughput) changes with it. */
  readonly v8: string;
  /** `platform-arch`, e.g. `linux-x64`. */
  readonly platform: string;
  /** Kernel / OS release. */
  readonly osRelease: string;
  /** ISO-8601 timestamp of when the info was taken (i.e. when the run started). */
  readonly date: string;
}

/** Snapshot of the current machine. Cheap (no I/O beyond what `node:os` caches). */
export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 100) / 100,
    node: process.version,
    v8: process.versions.v8,
    platform: `${process.platform}-${process.arch}`,
    osRelease: os.release(),
    date: new Date().toISOString(),
  };
}

/** One line for the head of a printed report. */
export function formatMachineInfo(info: MachineInfo): string {
  return (
    `${info.cpuModel}, ${info.cores} cores, ${info.memoryGiB} GiB, ` +
    `Node ${info.node} (V8 ${info.v8}), ${info.platform} ${info.osRelease}, ${info.date}`
  );
}
