/** Record shapes of the demo job, stage by stage. */

import type { ClickEvent } from './demo-clicks.js';

/** A click as the source stage emits it, stamped with its emit time. */
export interface TimedClick extends ClickEvent {
  /** Wall-clock ms (`performance.timeOrigin + performance.now()`) when the source emitted it. */
  readonly emittedAt: number;
}

/** After the page-keyed count: views of this page so far, including this click. */
export interface PageCountedClick extends TimedClick {
  readonly pageViews: number;
}

/** The job's output per click: both running counts (the event time `ts` is dropped). */
export interface CountedClick {
  readonly seq: number;
  readonly user: string;
  readonly page: string;
  readonly pageViews: number;
  /** Clicks of this user so far, including this click. */
  readonly userClicks: number;
  readonly emittedAt: number;
}

/** What the probe sink stamps on each record before the real sink takes it. */
export interface ProbeStamp {
  /** Wall-clock ms when the sink stage received the record. */
  receivedAt: number;
  /** `ctx.attempt` of the sink subtask that received it (0 before the crash). */
  attempt: number;
  /**
   * Wall-clock ms when the sink handed the record to the job client (for the collect sink under
   * exactly-once: when its checkpoint committed). Absent for sinks that do not deliver.
   */
  visibleAt?: number;
}

/** One record of the demo's output, as the job client collects it. */
export type DemoOutputRecord = CountedClick & ProbeStamp;
