/** Which tasks a checkpoint triggers and waits for once some tasks finished (FLIP-147). */

import { describe, expect, it } from 'vitest';
import {
  allSourcesEnded,
  calculateCheckpointPlan,
  lateTriggersOnInputEnd,
} from '../../../src/coordinator/checkpoint-plan.js';

const SOURCES = ['1/0', '1/1', '1/2'];
const ALL = [...SOURCES, '2/0', '2/1'];

describe('calculateCheckpointPlan', () => {
  it('with every task running: triggers the sources, waits for every task', () => {
    const plan = calculateCheckpointPlan({
      kind: 'periodic',
      tasks: ALL,
      sources: SOURCES,
      inputEnded: new Set(),
    });
    expect(plan).toEqual({ tasksToTrigger: SOURCES, tasksToAcknowledge: ALL });
  });

  it('a source that ended is still triggered (directly, for its final state) and still acknowledges', () => {
    const plan = calculateCheckpointPlan({
      kind: 'periodic',
      tasks: ALL,
      sources: SOURCES,
      inputEnded: new Set(['1/2']),
    });
    expect(plan).toEqual({ tasksToTrigger: SOURCES, tasksToAcknowledge: ALL });
  });

  it('a non-source task whose input ended is triggered directly, in deployment order', () => {
    const plan = calculateCheckpointPlan({
      kind: 'manual',
      tasks: ALL,
      sources: SOURCES,
      inputEnded: new Set(['2/1', '1/0']),
    });
    expect(plan.tasksToTrigger).toEqual([...SOURCES, '2/1']);
    expect(plan.tasksToAcknowledge).toEqual(ALL);
  });

  it('the final checkpoint triggers every task', () => {
    const plan = calculateCheckpointPlan({
      kind: 'final',
      tasks: ALL,
      sources: SOURCES,
      inputEnded: new Set(ALL),
    });
    expect(plan).toEqual({ tasksToTrigger: ALL, tasksToAcknowledge: ALL });
  });

  it('names each task once even when the deployment lists it twice', () => {
    const plan = calculateCheckpointPlan({
      kind: 'periodic',
      tasks: [...ALL, '2/0'],
      sources: SOURCES,
      inputEnded: new Set(),
    });
    expect(plan.tasksToAcknowledge).toEqual(ALL);
  });
});

describe('allSourcesEnded', () => {
  it('is true only once every source reported its end (and there is a source)', () => {
    expect(allSourcesEnded(SOURCES, new Set(['1/0', '1/1', '2/0']))).toBe(false);
    expect(allSourcesEnded(SOURCES, new Set(SOURCES))).toBe(true);
    expect(allSourcesEnded([], new Set(['1/0']))).toBe(false);
  });
});

describe('lateTriggersOnInputEnd', () => {
  const cp = (checkpointId: number, notYet: string[], triggered: string[]) => ({
    checkpointId,
    notYetAcknowledged: new Set(notYet),
    triggered: new Set(triggered),
  });

  it('triggers the checkpoints the task still owes and that never triggered it, ascending', () => {
    const pending = [cp(7, ['2/0', '2/1'], SOURCES), cp(5, ['2/0'], SOURCES), cp(6, ['2/1'], SOURCES)];
    expect(lateTriggersOnInputEnd('2/0', pending)).toEqual([5, 7]);
  });

  it('skips checkpoints the task already acknowledged or that triggered it directly', () => {
    const pending = [cp(5, ['1/2'], SOURCES), cp(6, ['2/0'], [...SOURCES, '2/0']), cp(7, ['2/1'], SOURCES)];
    expect(lateTriggersOnInputEnd('1/2', pending)).toEqual([]); // a source: triggered directly
    expect(lateTriggersOnInputEnd('2/0', pending)).toEqual([]);
    expect(lateTriggersOnInputEnd('2/1', pending)).toEqual([7]);
  });
});
