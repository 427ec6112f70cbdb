import { describe, expect, it } from 'vitest';
import { resolveJobOptions } from '../../../src/coordinator/job-options.js';
import { InjectedFailureError, InvalidOptionError, UnknownOptionError } from '../../../src/errors.js';
import type { InjectedFault } from '../../../src/protocol/injected-fault.js';
import { armFault } from '../../../src/worker/fault-injection.js';
import {
  AbstractStreamOperator,
  type StreamOperator,
  UserCodeError,
} from '../../../src/worker/operators/stream-operator.js';

class Recording extends AbstractStreamOperator {
  readonly seen: unknown[] = [];
  constructor(uid: string) {
    super(
      1,
      'op',
      uid,
      { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'op' },
      { collect() {} },
    );
  }
  processElement(value: unknown): void {
    this.seen.push(value);
  }
}

const fault = (f: Partial<InjectedFault> = {}): InjectedFault => ({
  kind: 'throw',
  attempt: 0,
  operatorUid: 'map:op:0',
  subtaskIndex: 1,
  atRecord: 3,
  ...f,
});

const feed = (op: StreamOperator, n: number): unknown => {
  try {
    for (let i = 1; i <= n; i++) op.processElement(i, 0);
  } catch (e) {
    return e;
  }
  return undefined;
};

describe('armFault', () => {
  it('throws before the atRecord-th record, as the operator user-code error, once', () => {
    const op = new Recording('map:op:0');
    expect(armFault(op, [fault()], { attempt: 0, subtaskIndex: 1, parallelism: 2, restored: true })).toBe(
      true,
    );
    const e = feed(op, 10);
    expect(e).toBeInstanceOf(UserCodeError);
    expect((e as UserCodeError).operator).toBe('op');
    expect((e as UserCodeError).cause).toBeInstanceOf(InjectedFailureError);
    expect((op as Recording).seen).toEqual([1, 2]); // record 3 never reached the function
    expect(feed(op, 5)).toBeUndefined(); // fires once
  });

  it('waits for a completed checkpoint when the attempt restored none', () => {
    const op = new Recording('map:op:0');
    armFault(op, [fault()], { attempt: 0, subtaskIndex: 1, parallelism: 2, restored: false });
    expect(feed(op, 5)).toBeUndefined();
    op.notifyCheckpointComplete(1);
    expect(feed(op, 1)).toBeInstanceOf(UserCodeError); // the first record after it
  });

  it('arms nothing for another attempt, operator or subtask (subtask taken modulo the parallelism)', () => {
    const where = { subtaskIndex: 1, parallelism: 2, restored: true };
    expect(armFault(new Recording('map:op:0'), [fault()], { ...where, attempt: 1 })).toBe(false);
    expect(armFault(new Recording('map:other:0'), [fault()], { ...where, attempt: 0 })).toBe(false);
    expect(armFault(new Recording('map:op:0'), [fault()], { ...where, subtaskIndex: 0, attempt: 0 })).toBe(
      false,
    );
    expect(armFault(new Recording('map:op:0'), [fault({ subtaskIndex: 3 })], { ...where, attempt: 0 })).toBe(
      true,
    );
    expect(armFault(new Recording('map:op:0'), undefined, { ...where, attempt: 0 })).toBe(false);
  });
});

describe('job option faultInjection', () => {
  it('is checked up front, naming the bad field', () => {
    expect(resolveJobOptions({}).faultInjection).toEqual([]);
    expect(resolveJobOptions({ faultInjection: [fault()] }).faultInjection).toEqual([fault()]);
    expect(() => resolveJobOptions({ faultInjection: [fault({ kind: 'boom' as 'throw' })] })).toThrow(
      /faultInjection\[0\]\.kind/,
    );
    expect(() => resolveJobOptions({ faultInjection: [fault({ atRecord: 0 })] })).toThrow(InvalidOptionError);
    expect(() =>
      resolveJobOptions({ faultInjection: [{ ...fault(), atRecrod: 2 } as InjectedFault] }),
    ).toThrow(UnknownOptionError);
    expect(() => resolveJobOptions({ faultInjection: {} as InjectedFault[] })).toThrow(/faultInjection/);
  });
});
