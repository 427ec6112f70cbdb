/** The receiver's ordering decisions (remote-edge-sequence.ts), as scripted sequences. */
import { describe, expect, it } from 'vitest';
import {
  decideSequence,
  INITIAL_SEQUENCE_STATE,
  type SequenceAction,
  type SequenceEvent,
  type SequenceState,
} from '../../../src/cluster/remote-edge-sequence.js';
import { RemoteEdgeProtocolError, RemoteEdgeSequenceError } from '../../../src/errors.js';

const data = (generation: number, seq: number): SequenceEvent => ({ kind: 'data', generation, seq });
const resumed = (generation: number, firstSeq: number, producerNext: number): SequenceEvent => ({
  kind: 'resumed',
  generation,
  firstSeq,
  producerNext,
});
const issue: SequenceEvent = { kind: 'issue-resume' };

function run(events: readonly SequenceEvent[], from: SequenceState = INITIAL_SEQUENCE_STATE) {
  let state = from;
  const actions: SequenceAction[] = [];
  for (const event of events) {
    const decision = decideSequence('f', state, event);
    state = decision.next;
    actions.push(decision.action);
  }
  return { state, actions };
}

describe('remote edge sequence decisions', () => {
  it('delivers in order after the handshake', () => {
    const { state, actions } = run([issue, resumed(1, 0, 0), data(1, 0), data(1, 1), data(1, 2)]);
    expect(actions).toEqual(['send-resume', 'resumed', 'deliver', 'deliver', 'deliver']);
    expect(state).toMatchObject({ generation: 1, expectedSeq: 3, awaitingResumed: false });
  });

  it('asks for a resume at a gap, drops the old generation, then delivers the resent messages', () => {
    const { state, actions } = run([
      issue,
      resumed(1, 0, 0),
      data(1, 0),
      data(1, 3), // 1 and 2 lost on a cut
      issue,
      data(1, 4), // in flight before the resume: stale
      resumed(2, 1, 5),
      data(2, 1),
      data(2, 2),
      data(2, 3),
      data(2, 4),
    ]);
    expect(actions).toEqual([
      'send-resume',
      'resumed',
      'deliver',
      'resume',
      'send-resume',
      'stale',
      'resumed',
      'deliver',
      'deliver',
      'deliver',
      'deliver',
    ]);
    expect(state.expectedSeq).toBe(5);
  });

  it('asks again when data of the current generation comes before its resumed (the resumed was lost)', () => {
    expect(run([issue, data(1, 0)]).actions).toEqual(['send-resume', 'resume']);
  });

  it('raises a duplicate in the current generation', () => {
    const error = catchError(() => run([issue, resumed(1, 0, 0), data(1, 0), data(1, 1), data(1, 0)]));
    expect(error).toBeInstanceOf(RemoteEdgeSequenceError);
    expect(error).toMatchObject({ sequenceFault: 'duplicate', expectedSeq: 2, receivedSeq: 0 });
  });

  it('raises a gap the producer cannot fill: it resends from later than asked', () => {
    const error = catchError(() =>
      run([issue, resumed(1, 0, 0), data(1, 0), data(1, 2), issue, resumed(2, 2, 3)]),
    );
    expect(error).toMatchObject({ sequenceFault: 'gap', expectedSeq: 1, receivedSeq: 2 });
  });

  it('raises a gap when a message was seen that the producer says it never sent', () => {
    const error = catchError(() => run([issue, resumed(1, 0, 0), data(1, 7), issue, resumed(2, 0, 3)]));
    expect(error).toBeInstanceOf(RemoteEdgeSequenceError);
    expect(error).toMatchObject({ sequenceFault: 'gap', receivedSeq: 3 });
  });

  it('rejects generations it never issued', () => {
    expect(catchError(() => run([issue, data(2, 0)]))).toBeInstanceOf(RemoteEdgeProtocolError);
    expect(catchError(() => run([issue, resumed(3, 0, 0)]))).toBeInstanceOf(RemoteEdgeProtocolError);
  });

  it('ignores a resumed of an older generation or a repeated one', () => {
    const { actions } = run([issue, issue, resumed(1, 0, 0), resumed(2, 0, 0), resumed(2, 0, 0)]);
    expect(actions).toEqual(['send-resume', 'send-resume', 'stale', 'resumed', 'stale']);
  });

  it('never delivers a sequence number twice or skips one (seeded random loss and resumes)', () => {
    let seed = 17;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    // A model producer: sends seqs in the current generation; the wire loses some.
    let state = decideSequence('f', INITIAL_SEQUENCE_STATE, issue).next;
    let producerGeneration = 0;
    let producerNext = 0;
    let retainedFrom = 0;
    const delivered: number[] = [];
    const wire: SequenceEvent[] = [];
    const onResume = () => {
      producerGeneration = state.generation;
      retainedFrom = state.expectedSeq;
      wire.push(resumed(producerGeneration, retainedFrom, producerNext));
      for (let s = retainedFrom; s < producerNext; s++) wire.push(data(producerGeneration, s));
    };
    onResume();
    for (let step = 0; step < 5000; step++) {
      if (producerGeneration > 0 && random() < 0.5) wire.push(data(producerGeneration, producerNext++));
      const event = wire.shift();
      if (event === undefined) continue;
      if (random() < 0.05) continue; // lost
      const decision = decideSequence('f', state, event);
      state = decision.next;
      if (decision.action === 'deliver') delivered.push((event as { seq: number }).seq);
      if (decision.action === 'resume' || (random() < 0.01 && !state.awaitingResumed)) {
        state = decideSequence('f', state, issue).next;
        onResume();
      }
    }
    expect(delivered.length).toBeGreaterThan(1000);
    expect(delivered).toEqual(delivered.map((_, i) => i));
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}
