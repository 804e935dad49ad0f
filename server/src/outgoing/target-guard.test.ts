import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config-values.js';
import { parseAllowList, TargetGuard, TargetRefusedError } from './target-guard.js';

describe('TargetGuard (SSRF protection)', () => {
  const strict = new TargetGuard([]);

  it('refuses loopback, private, link-local, CGNAT, unique-local, multicast and mapped addresses', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fd12::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      'fe80::1%eth0',
    ]) {
      expect(strict.refuses('h', address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1']) {
      expect(strict.refuses('h', address), address).toBe(false);
    }
  });

  it('allows what the administrator lists: ranges, addresses, host names, or everything', () => {
    const guard = new TargetGuard(parseAllowList('10.0.0.0/8, 192.168.1.5, fd00::/8, mqtt.plant.local', 'X'));
    expect(guard.refuses('h', '10.20.30.40')).toBe(false);
    expect(guard.refuses('h', '192.168.1.5')).toBe(false);
    expect(guard.refuses('h', '192.168.1.6')).toBe(true);
    expect(guard.refuses('h', 'fd00::5')).toBe(false);
    expect(guard.refuses('mqtt.plant.local', '192.168.9.9')).toBe(false);
    expect(guard.refuses('other.local', '192.168.9.9')).toBe(true);
    expect(new TargetGuard(['*']).refuses('h', '127.0.0.1')).toBe(false);
  });

  /** The guard's `lookup` as net.connect calls it (all addresses, either family). */
  const lookup = (guard: TargetGuard, host: string) =>
    new Promise<unknown>((resolve, reject) =>
      guard.lookup(host, { all: true, family: 0 }, (error, addresses) =>
        error ? reject(error) : resolve(addresses),
      ),
    );

  it('resolves names before judging them', async () => {
    await expect(lookup(strict, 'localhost')).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(lookup(new TargetGuard(['127.0.0.0/8', '::1']), 'localhost')).resolves.toContainEqual({
      address: '127.0.0.1',
      family: 4,
    });
  });

  it('refuses a name when any of its addresses is refused, and says where only in its log fields', async () => {
    const names: Record<string, string[]> = {
      'plant-broker.test': ['203.0.113.7', '10.20.30.40'],
      'public.test': ['203.0.113.8'],
    };
    const guard = new TargetGuard([], (host) =>
      Promise.resolve((names[host] ?? []).map((address) => ({ address, family: 4 }))),
    );
    const refused = await lookup(guard, 'plant-broker.test').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TargetRefusedError);
    expect(refused).toMatchObject({ host: 'plant-broker.test', address: '10.20.30.40' });
    expect((refused as Error).message).not.toContain('10.20.30.40');
    await expect(lookup(guard, 'public.test')).resolves.toEqual([{ address: '203.0.113.8', family: 4 }]);
    await expect(lookup(guard, 'nowhere.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('refuses malformed allow lists at start', () => {
    for (const raw of ['10.0.0.0/33', '10.0.0.0/8/1', 'not a host', 'fd00::/200']) {
      expect(() => parseAllowList(raw, 'STELLWERK_OUTGOING_ALLOW_PRIVATE'), raw).toThrow(ConfigError);
    }
    expect(parseAllowList('', 'X')).toEqual([]);
  });
});
