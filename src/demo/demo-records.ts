/** Record shapes of the demo job, stage by stage. */

import type { ClickEvent } from './demo-clicks.js';

/** A click as the main thread appends it to the log: stamped with its append time. */
export interface LoggedClick extends ClickEvent {
  /**
   * Wall-clock ms (`performance.timeOrigin + performance.now()`) when the main thread handed the
   * click's batch to `topic.append`.
   */
  readonly appendedAt: number;
}

/** After the page-keyed count: views of this page so far, including this click. */
export interface PageCountedClick extends LoggedClick {
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
  readonly appendedAt: number;
}

/** What the probe sink stamps on each record before the real sink takes it. */
export interface ProbeStamp {
  /** Wall-clock ms when the sink stage received the record. */
  receivedAt: number;
  /** `ctx.attempt` of the sink subtask that received it (0 before the crash). */
  attempt: number;
  /**
   * The last checkpoint the sink subtask had pre-committed before the record arrived (the
   * restored one, or 0, before its first): the record is in a part file sealed by a later
   * checkpoint, so it becomes visible when the first completed checkpoint after this one does.
   */
  sealedAfter: number;
}

/** One record of the running-count output, as read back from the committed part files. */
export type DemoOutputRecord = CountedClick & ProbeStamp;

/** One record of the windowed output: clicks of `user` with `ts` in `[start, start + 1 s)`. */
export interface WindowCount {
  readonly user: string;
  readonly start: number;
  readonly clicks: number;
}
