import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StartupError } from '../platform/db/startup-error.js';
import { brokerConnectionCap, SocketBudget } from './connection-cap.js';

const limit = (soft: number | null) => ({ soft, hard: soft });
const unset = { maxConnections: undefined, reservedFiles: undefined };

describe('brokerConnectionCap', () => {
  it('keeps 1,024 descriptors for the rest of the server, or half the limit when that is lower', () => {
    expect(brokerConnectionCap(limit(65_536), unset)).toMatchObject({ max: 64_512, reserved: 1024 });
    expect(brokerConnectionCap(limit(1024), unset)).toMatchObject({ max: 512, reserved: 512 });
  });

  it('takes the reserve and an explicit maximum from the settings, whichever is lower wins', () => {
    expect(brokerConnectionCap(limit(1024), { maxConnections: undefined, reservedFiles: 1014 }).max).toBe(10);
    expect(brokerConnectionCap(limit(65_536), { maxConnections: 100, reservedFiles: undefined }).max).toBe(
      100,
    );
    expect(brokerConnectionCap(limit(2048), { maxConnections: 5000, reservedFiles: 1048 }).max).toBe(1000);
  });

  it('has no cap without a limit to derive one from, unless one is configured', () => {
    expect(brokerConnectionCap(null, unset)).toEqual({ max: null, openFiles: null, reserved: 1024 });
    expect(brokerConnectionCap(limit(null), unset).max).toBeNull();
    expect(brokerConnectionCap(null, { maxConnections: 50, reservedFiles: undefined }).max).toBe(50);
  });

  it('refuses to start when the reserve leaves nothing for MQTT', () => {
    expect(() =>
      brokerConnectionCap(limit(1024), { maxConnections: undefined, reservedFiles: 1024 }),
    ).toThrow(StartupError);
  });
});

describe('SocketBudget', () => {
  it('counts sockets until they close and refuses beyond its maximum', async () => {
    const budget = new SocketBudget(2);
    const sockets = [new PassThrough(), new PassThrough(), new PassThrough()];
    expect(sockets.map((s) => budget.admit(s))).toEqual([true, true, false]);
    sockets[0]!.destroy();
    await new Promise((resolve) => sockets[0]!.once('close', resolve));
    expect(budget.open).toBe(1);
    expect(budget.admit(sockets[2]!)).toBe(true);
  });
});
