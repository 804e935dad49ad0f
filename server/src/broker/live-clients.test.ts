import { describe, expect, it } from 'vitest';
import { LiveClients, type LimitedConnector } from './live-clients.js';

const client = () => ({ closed: false });
const connector = (id: string, accountPath: string[], maxConnections?: number): LimitedConnector => ({
  id,
  accountPath,
  maxConnections,
});

describe('LiveClients', () => {
  it("refuses a connector's client beyond its limit, and admits again once one is released", () => {
    const live = new LiveClients({ perConnector: 2, perAccount: 100 });
    const c = connector('c1', ['root', 'tenant']);
    const [a, b, x] = [client(), client(), client()];
    expect(live.admit(a, 'c1/a', c)).toBeNull();
    expect(live.admit(b, 'c1/b', c)).toBeNull();
    expect(live.admit(x, 'c1/x', c)).toEqual({ scope: 'connector', limit: 2 });
    expect(live.count('c1')).toBe(2);
    live.release(a);
    expect(live.admit(x, 'c1/x', c)).toBeNull();
    expect(live.of('c1')).toEqual([b, x]);
  });

  it("uses the connector's own maxConnections instead of the default", () => {
    const live = new LiveClients({ perConnector: 1, perAccount: 100 });
    const c = connector('c1', ['root', 'tenant'], 3);
    for (const id of ['a', 'b', 'c']) expect(live.admit(client(), `c1/${id}`, c)).toBeNull();
    expect(live.admit(client(), 'c1/d', c)).toEqual({ scope: 'connector', limit: 3 });
  });

  it('counts an account across its connectors and sub-accounts, but not the top-level account', () => {
    const live = new LiveClients({ perConnector: 10, perAccount: 3 });
    const own = connector('own', ['root', 'tenant']);
    const sub = connector('sub', ['root', 'tenant', 'sub-account']);
    const other = connector('other', ['root', 'other-tenant']);
    const operator = connector('operator', ['root']);
    expect(live.admit(client(), 'own/1', own)).toBeNull();
    expect(live.admit(client(), 'sub/1', sub)).toBeNull();
    expect(live.admit(client(), 'sub/2', sub)).toBeNull();
    expect(live.admit(client(), 'sub/3', sub)).toEqual({ scope: 'account', limit: 3 });
    expect(live.admit(client(), 'own/2', own)).toEqual({ scope: 'account', limit: 3 });
    for (let i = 0; i < 3; i++) expect(live.admit(client(), `other/${i}`, other)).toBeNull();
    // The top-level account's subtree is the instance: only the per-connector limit applies there.
    for (let i = 0; i < 10; i++) expect(live.admit(client(), `operator/${i}`, operator)).toBeNull();
    expect(live.size).toBe(16);
  });

  it('admits a takeover of a live client id at the limit, and keeps counting right after both close', () => {
    const live = new LiveClients({ perConnector: 1, perAccount: 1 });
    const c = connector('c1', ['root', 'tenant']);
    const first = client();
    const second = client();
    expect(live.admit(first, 'c1/gw', c)).toBeNull();
    expect(live.admit(client(), 'c1/other', c)).toEqual({ scope: 'connector', limit: 1 });
    expect(live.admit(second, 'c1/gw', c)).toBeNull();
    first.closed = true;
    live.release(first);
    expect(live.count('c1')).toBe(1);
    // A closed holder is no longer a takeover: the limit applies.
    second.closed = true;
    expect(live.admit(client(), 'c1/gw', c)).toEqual({ scope: 'connector', limit: 1 });
    live.release(second);
    live.release(second);
    expect([live.size, live.count('c1')]).toEqual([0, 0]);
    expect(live.admit(client(), 'c1/gw', c)).toBeNull();
  });
});
