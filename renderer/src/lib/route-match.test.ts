import { describe, expect, it } from 'vitest';
import { matchRoute } from './route-match';

describe('matchRoute', () => {
  const routes = {
    '/devices': 'list',
    '/devices/new': 'create',
    '/devices/:id': 'detail',
    '/twins/:id/states/:key': 'state',
  };

  it('prefers an exact path, then fills :name segments, decoded', () => {
    expect(matchRoute(routes, '/devices')).toEqual({ value: 'list', params: {} });
    expect(matchRoute(routes, '/devices/new')).toEqual({ value: 'create', params: {} });
    expect(matchRoute(routes, '/devices/01a2-x')).toEqual({ value: 'detail', params: { id: '01a2-x' } });
    expect(matchRoute(routes, '/twins/t1/states/flow%20in')).toEqual({
      value: 'state',
      params: { id: 't1', key: 'flow in' },
    });
  });

  it('answers nothing for other lengths or an empty segment', () => {
    expect(matchRoute(routes, '/devices/a/b')).toBeUndefined();
    expect(matchRoute(routes, '/devices/')).toBeUndefined();
    expect(matchRoute(routes, '/nothing')).toBeUndefined();
  });
});
