/**
 * The demo's options from the environment: the opt-in `os` durability and its labelled row, the
 * job threads' nice value.
 */
import { describe, expect, it } from 'vitest';
import { demoOptionsFromEnv } from '../../../src/demo/demo.js';
import { appendLatencyLabel } from '../../../src/demo/demo-report.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('demoOptionsFromEnv', () => {
  it('leaves durability to the default (fsync) unless WEIR_DEMO_DURABILITY is set', () => {
    expect(demoOptionsFromEnv({}).durability).toBeUndefined();
    expect(demoOptionsFromEnv({ WEIR_DEMO_DURABILITY: '' }).durability).toBeUndefined();
    expect(demoOptionsFromEnv({ WEIR_DEMO_DURABILITY: 'os' }).durability).toBe('os');
    expect(demoOptionsFromEnv({ WEIR_DEMO_DURABILITY: 'fsync' }).durability).toBe('fsync');
  });

  it('rejects any other durability with a typed error naming the variable', () => {
    expect(() => demoOptionsFromEnv({ WEIR_DEMO_DURABILITY: 'none' })).toThrow(InvalidOptionError);
    expect(() => demoOptionsFromEnv({ WEIR_DEMO_DURABILITY: 'none' })).toThrow(/WEIR_DEMO_DURABILITY/);
  });
});

describe('WEIR_DEMO_WORKER_NICE', () => {
  it('leaves the nice value to the default unless set; 0 turns it off', () => {
    expect(demoOptionsFromEnv({}).workerNice).toBeUndefined();
    expect(demoOptionsFromEnv({ WEIR_DEMO_WORKER_NICE: '' }).workerNice).toBeUndefined();
    expect(demoOptionsFromEnv({ WEIR_DEMO_WORKER_NICE: '0' }).workerNice).toBe(0);
    expect(demoOptionsFromEnv({ WEIR_DEMO_WORKER_NICE: '19' }).workerNice).toBe(19);
  });

  it('rejects what is not an integer in 0..19 with a typed error naming the variable', () => {
    for (const bad of ['-1', '20', '2.5', 'low']) {
      expect(() => demoOptionsFromEnv({ WEIR_DEMO_WORKER_NICE: bad })).toThrow(InvalidOptionError);
      expect(() => demoOptionsFromEnv({ WEIR_DEMO_WORKER_NICE: bad })).toThrow(/WEIR_DEMO_WORKER_NICE/);
    }
  });
});

describe('appendLatencyLabel', () => {
  it("says 'durable' only under fsync and names the missing fsync under os", () => {
    expect(appendLatencyLabel('fsync')).toContain('call → durable');
    expect(appendLatencyLabel('os')).not.toContain('durable');
    expect(appendLatencyLabel('os')).toMatch(/NO fsync/);
  });
});
