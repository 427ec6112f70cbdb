import { describe, expect, it } from 'vitest';
import { resolveDashboardOptions } from '../../../src/dashboard/dashboard-options.js';
import { authorize } from '../../../src/dashboard/dashboard-server.js';
import { InvalidOptionError } from '../../../src/errors.js';

describe('resolveDashboardOptions', () => {
  it('is off unless asked for; true and {} mean an ephemeral port on 127.0.0.1', () => {
    expect(resolveDashboardOptions(undefined)).toBeNull();
    expect(resolveDashboardOptions(false)).toBeNull();
    const defaults = { port: 0, host: '127.0.0.1', token: undefined, job: undefined };
    expect(resolveDashboardOptions(true)).toEqual(defaults);
    expect(resolveDashboardOptions({})).toEqual(defaults);
    expect(resolveDashboardOptions({ port: 8081, host: '0.0.0.0', token: '12345678', job: 'x' })).toEqual({
      port: 8081,
      host: '0.0.0.0',
      token: '12345678',
      job: 'x',
    });
  });

  it.each([
    [{ port: -1 }, 'dashboard.port'],
    [{ port: 65536 }, 'dashboard.port'],
    [{ port: 1.5 }, 'dashboard.port'],
    [{ port: '80' }, 'dashboard.port'],
    [{ host: '' }, 'dashboard.host'],
    [{ token: 'short' }, 'dashboard.token'],
    [{ job: '' }, 'dashboard.job'],
    ['yes', 'dashboard'],
  ])('rejects %j naming %s', (value, option) => {
    let error: unknown;
    try {
      resolveDashboardOptions(value as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as InvalidOptionError).option).toBe(option);
  });
  it('rejects an unknown key, naming it with its path', () => {
    expect(() => resolveDashboardOptions({ prot: 8080 } as never)).toThrow(/dashboard\.prot/);
  });
});

describe('authorize', () => {
  const req = (authorization?: string) => ({ headers: authorization ? { authorization } : {} });
  it('refuses every action when no token is configured', () => {
    expect(authorize(req('Bearer anything'), undefined)?.status).toBe(403);
  });
  it('needs the exact bearer token', () => {
    expect(authorize(req(), 'secret-token')?.status).toBe(401);
    expect(authorize(req('Bearer secret-tokeN'), 'secret-token')?.status).toBe(401);
    expect(authorize(req('Bearer secret-token-longer'), 'secret-token')?.status).toBe(401);
    expect(authorize(req('secret-token'), 'secret-token')?.status).toBe(401);
    expect(authorize(req('Bearer secret-token'), 'secret-token')).toBeNull();
  });
});
