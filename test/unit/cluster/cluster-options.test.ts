/** Cluster options are checked up front with typed errors; ids and bucket names stay within what NATS allows. */
import { describe, expect, it } from 'vitest';
import {
  checkInstanceId,
  coordinatorBucket,
  DEFAULT_TIMEOUT_MS,
  membersBucket,
  newInstanceId,
  resolveClusterOptions,
} from '../../../src/cluster/cluster-options.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('cluster options', () => {
  it('applies the default timeout and accepts one URL or several', () => {
    expect(resolveClusterOptions({ servers: 'nats://h:4222', name: 'jobs-1' })).toEqual({
      servers: ['nats://h:4222'],
      name: 'jobs-1',
      timeoutMs: DEFAULT_TIMEOUT_MS,
    });
    expect(resolveClusterOptions({ servers: ['a', 'b'], name: 'x', timeoutMs: 500 }).servers).toEqual([
      'a',
      'b',
    ]);
  });

  it.each([
    [{ servers: [], name: 'x' }, 'cluster.servers'],
    [{ servers: 'a', name: 'a.b' }, 'cluster.name'],
    [{ servers: 'a', name: '' }, 'cluster.name'],
    [{ servers: 'a', name: 'x'.repeat(65) }, 'cluster.name'],
    [{ servers: 'a', name: 'x', timeoutMs: 99 }, 'cluster.timeoutMs'],
    [{ servers: 'a', name: 'x', timeoutMs: 30_001 }, 'cluster.timeoutMs'],
    [{ servers: 'a', name: 'x', timeoutMs: 1.5 }, 'cluster.timeoutMs'],
  ])('refuses %j naming %s', (o, option) => {
    expect(() => resolveClusterOptions(o as never)).toThrow(InvalidOptionError);
    expect(() => resolveClusterOptions(o as never)).toThrow(`invalid option ${option}`);
  });

  it('members and coordinator buckets of any two names differ (prefixes no name can make)', () => {
    expect(membersBucket('a_coordinator')).not.toBe(coordinatorBucket('a'));
    expect(coordinatorBucket('x')).toBe('weir_coordinator_x');
    expect(membersBucket('x')).toBe('weir_cluster_x');
  });

  it('instance ids are single KV key tokens, fresh per call', () => {
    const id = newInstanceId('host.example.com', 42);
    expect(id).toMatch(/^host_example_com-42-[0-9a-z]{10}$/);
    expect(newInstanceId('h', 1)).not.toBe(newInstanceId('h', 1));
    expect(checkInstanceId(id)).toBe(id);
    expect(() => checkInstanceId('a.b')).toThrow(InvalidOptionError);
  });
});
