/**
 * `weir verify`'s report as text (a summary table for the terminal) and as a self-contained HTML
 * page (`src/report`): the verdict, per sink the counts and the first differing records, the
 * failure schedule and the timeline of deployments, checkpoints, failures and stops. Pure.
 */

import { type ReportBlock, renderHtmlReport } from '../report/html-report.js';
import { formatTextTable } from '../report/text-table.js';
import { isStopFailure } from './failure-schedule.js';
import type { OutputDifference, RecordDifference } from './output-multiset.js';
import type { SequenceDifference } from './output-sequence.js';
import type { ReportedFailure, VerifyReport } from './verify-job.js';

/** Exit code of `weir verify`: 0 pass, 1 output differs under failures, 3 non-deterministic job. */
export function verifyExitCode(report: VerifyReport): 0 | 1 | 3 {
  return report.verdict === 'pass' ? 0 : report.verdict === 'fail' ? 1 : 3;
}

const show = (r: RecordDifference): string =>
  `${JSON.stringify(r.record)} (reference ${r.expected}×, this run ${r.actual}×)`;

function differenceLines(d: OutputDifference, q?: SequenceDifference): string[] {
  return [
    ...(q === undefined ? [] : [sequenceLine(q)]),
    ...d.lost.map((r) => `lost: ${show(r)}`),
    ...d.duplicated.map((r) => `duplicated: ${show(r)}`),
    ...d.unexpected.map((r) => `not in the reference (changed?): ${show(r)}`),
  ];
}

function sequenceLine(q: SequenceDifference): string {
  const at = (v: unknown) => (v === undefined ? 'nothing (the sequence ended)' : JSON.stringify(v));
  return `order: key ${JSON.stringify(q.key)} differs first at position ${q.position}: reference ${at(q.expected)}, this run ${at(q.actual)} (${q.keysDiffering} key(s) differ)`;
}

function sinkRows(report: VerifyReport): string[][] {
  return report.sinks.map((s) => {
    const d = s.difference;
    return [
      s.sink,
      s.type,
      s.status,
      d ? String(d.referenceRecords) : '-',
      d ? String(d.actualRecords) : '-',
      d ? String(d.lostCount) : '-',
      d ? String(d.duplicateCount) : '-',
      d ? String(d.unexpectedCount) : '-',
    ];
  });
}

const SINK_HEAD = ['sink', 'type', 'status', 'reference', 'this run', 'lost', 'duplicated', 'changed'];

export function formatVerifySummary(report: VerifyReport): string {
  const o = report.options;
  const lines: string[] = [];
  lines.push(
    `weir verify ${report.job}: ${o.mode}, parallelism ${o.parallelism}, checkpoints every ${o.checkpointInterval} ms`,
  );
  if (report.verdict === 'non-deterministic') {
    lines.push(
      'NON-DETERMINISTIC: two failure-free runs committed different output, so failures cannot be judged.',
    );
    lines.push('"this run" is the second failure-free run.', '');
    lines.push(formatTextTable(SINK_HEAD, sinkRows(report)), '');
    for (const s of report.sinks) {
      lines.push(`${s.sink}: first differing records`);
      for (const l of differenceLines(s.difference!, s.sequence)) lines.push(`  ${l}`);
    }
    lines.push('', 'likely causes:');
    for (const c of report.likelyCauses) lines.push(`  - ${c.cause}: ${c.why}`);
    return lines.join('\n');
  }
  const fired = report.failures.filter((f) => f.fired).length;
  lines.push(
    `failures: ${report.failures.length} scheduled (seed ${o.seed}), ${fired} fired; ${report.restarts} restarts, ${report.checkpoints} checkpoints`,
  );
  for (const f of report.failures) lines.push(`  attempt ${f.attempt}: ${describeFailure(f)}`);
  if (report.failures.length > 0 && fired === 0) {
    lines.push(
      'WARNING: no failure fired (the job ended before a scheduled record came after a completed checkpoint); give it more input, or a lower --checkpoint-interval',
    );
  }
  lines.push('', formatTextTable(SINK_HEAD, sinkRows(report)), '');
  for (const s of report.sinks) {
    if (s.status !== 'differs') continue;
    lines.push(`${s.sink}: first differing records`);
    for (const l of differenceLines(s.difference!, s.sequence)) lines.push(`  ${l}`);
  }
  if (report.verdict === 'pass') {
    lines.push(
      o.mode === 'exactly-once'
        ? 'PASS: every compared sink committed exactly the reference output.'
        : 'PASS: no compared sink lost a record (duplicates are within at-least-once).',
    );
  } else {
    lines.push(
      o.mode === 'exactly-once'
        ? 'FAIL: output under failures differs from the failure-free output (see above).'
        : 'FAIL: records were lost under failures (see above).',
    );
  }
  return lines.join('\n');
}

export function verifyReportHtml(report: VerifyReport): string {
  const blocks: ReportBlock[] = [];
  const o = report.options;
  blocks.push({
    kind: 'paragraph',
    text: `Verdict: ${report.verdict}. Mode ${o.mode}, parallelism ${o.parallelism}, checkpoints every ${o.checkpointInterval} ms, seed ${o.seed}.`,
  });
  blocks.push({ kind: 'heading', text: 'Sinks' });
  blocks.push({ kind: 'table', table: { head: SINK_HEAD, rows: sinkRows(report) } });
  for (const s of report.sinks) {
    if (s.status !== 'differs') continue;
    blocks.push({ kind: 'heading', text: `${s.sink}: first differing records` });
    blocks.push({ kind: 'list', items: differenceLines(s.difference!, s.sequence) });
  }
  if (report.verdict === 'non-deterministic') {
    blocks.push({ kind: 'heading', text: 'Likely causes' });
    blocks.push({ kind: 'list', items: report.likelyCauses.map((c) => `${c.cause}: ${c.why}`) });
  } else {
    blocks.push({ kind: 'heading', text: 'Failure schedule' });
    blocks.push({
      kind: 'table',
      table: {
        head: ['attempt', 'kind', 'where', 'when', 'fired'],
        rows: report.failures.map((f) => [
          String(f.attempt),
          f.kind,
          isStopFailure(f)
            ? f.kind === 'sigkill'
              ? 'the process running the job; a new one restores the latest checkpoint'
              : `the job; resumed at parallelism ${f.parallelism}`
            : `${f.operator} subtask ${f.subtaskIndex}`,
          isStopFailure(f)
            ? `after ${f.afterCheckpoints} checkpoint(s) of the attempt`
            : `from record ${f.atRecord} on, once a checkpoint is there`,
          f.fired ? 'yes' : 'no',
        ]),
      },
    });
    blocks.push({ kind: 'heading', text: 'Timeline' });
    blocks.push({
      kind: 'table',
      table: {
        head: ['ms', 'event'],
        rows: report.timeline.map((e) => [
          String(e.atMs),
          e.kind === 'deployed'
            ? `attempt ${e.attempt} deployed${e.restoredFrom !== undefined ? `, restored checkpoint ${e.restoredFrom}` : ''}`
            : e.kind === 'checkpoint'
              ? `checkpoint ${e.checkpointId} completed`
              : e.kind === 'stopped'
                ? `attempt ${e.attempt} stopped with savepoint ${e.checkpointId}; resuming at parallelism ${e.parallelism}`
                : e.kind === 'killed'
                  ? `attempt ${e.attempt}: process SIGKILLed${e.lastCheckpointId === undefined ? ' before any checkpoint completed' : ` after checkpoint ${e.lastCheckpointId}`}; a new process restores the latest checkpoint`
                  : `attempt ${e.attempt} failed: ${e.message}`,
        ]),
      },
    });
  }
  return renderHtmlReport({ title: `weir verify ${report.job}`, blocks });
}

/** One line of the schedule: what fails, where and when, and why it may not have fired. */
function describeFailure(f: ReportedFailure): string {
  if (f.kind === 'sigkill') {
    return `sigkill: SIGKILL the process running the job after ${f.afterCheckpoints} checkpoint(s) of the attempt, then restore the latest checkpoint in a new process${f.fired ? '' : ' (did not fire: the job ended first)'}`;
  }
  if (isStopFailure(f)) {
    const what = f.kind === 'rescale' ? `resume at parallelism ${f.parallelism}` : 'resume';
    return `${f.kind}: stop with a savepoint after ${f.afterCheckpoints} checkpoint(s) of the attempt, then ${what}${f.fired ? '' : ' (did not fire: the job ended first)'}`;
  }
  return `${f.kind} in ${f.operator} subtask ${f.subtaskIndex} from record ${f.atRecord} on, once a checkpoint is there${f.fired ? '' : ' (did not fire: the input ended first)'}`;
}
