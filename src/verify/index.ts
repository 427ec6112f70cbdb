export {
  FAILURE_KINDS,
  type FailureKind as VerifyFailureKind,
  type PlannedFailure,
  planFailures,
  type StopFailure,
} from './failure-schedule.js';
export { compareOutputs, type OutputDifference, type RecordDifference } from './output-multiset.js';
export { compareKeyedSequences, type RecordKey, type SequenceDifference } from './output-sequence.js';
export {
  type ReportedFailure,
  type ResolvedVerifyOptions,
  type SinkVerdict,
  type TimelineEvent,
  type VerifyOptions,
  type VerifyReport,
  verifyJob,
} from './verify-job.js';
export { formatVerifySummary, verifyExitCode, verifyReportHtml } from './verify-report.js';
