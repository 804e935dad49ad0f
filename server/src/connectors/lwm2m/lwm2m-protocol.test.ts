import { describe, expect, it, vi } from 'vitest';
import { settingsValidator } from '../kinds/derive.js';
import { lwm2mKind } from '../kinds/lwm2m.kind.js';
import { parseCommand } from './lwm2m-downlink.js';
import { ClientLog, MAX_LOG_PER_MINUTE } from './lwm2m-log.js';
import { objectLinks, offers, registerParams } from './lwm2m-registration.js';
import { lwm2mSettings } from './lwm2m.link.js';

const command = (doc: unknown) =>
  parseCommand(Buffer.from(typeof doc === 'string' ? doc : JSON.stringify(doc)));

describe('LwM2M registration, commands and settings', () => {
  it('reads the register query and the objects of the link-format body', () => {
    expect(registerParams('/rd?ep=meter-7&lt=300&lwm2m=1.1&b=U')).toEqual({
      endpoint: 'meter-7',
      lifetimeSeconds: 300,
      version: '1.1',
      binding: 'U',
    });
    expect(() => registerParams('/rd?ep=a&lt=0')).toThrow(/lifetime must be 1 to/);
    expect(() => registerParams('/rd?ep=a%01b')).toThrow(/printable/);
    const links = objectLinks(Buffer.from('</>;rt="oma.lwm2m";ct=11543,</1/0>,</3/0>;ver=1.1,</3303>,<bad>'));
    expect(links).toEqual(['1/0', '3/0', '3303']);
    expect(offers(links, '3303/0/5700')).toBe(true);
    expect(offers(links, '3/0/9')).toBe(true);
    expect(offers(links, '3/1/9')).toBe(false);
    expect(offers(links, '3311/0/5850')).toBe(false);
  });

  it('reads read, write and execute commands and says what is wrong with a bad one', () => {
    expect(command({ op: 'read', path: '/3/0/0' })).toEqual({ op: 'read', path: '3/0/0' });
    expect(command({ op: 'write', path: '3311/0/5850', value: false })).toEqual({
      op: 'write',
      path: '3311/0/5850',
      value: false,
    });
    expect(command({ op: 'execute', path: '3/0/4' })).toEqual({ op: 'execute', path: '3/0/4' });
    expect(() => command('01a4')).toThrow(/must be a JSON object such as/);
    expect(() => command({ op: 'read', path: 'temperature' })).toThrow(/"path" must be an LwM2M path/);
    expect(() => command({ op: 'write', path: '3311/0', value: 1 })).toThrow(/path of one resource/);
    expect(() => command({ op: 'write', path: '3311/0/5850', value: { on: 1 } })).toThrow(/needs a "value"/);
    expect(() => command({ op: 'delete', path: '3/0' })).toThrow(/"op" must be/);
  });

  it('validates the settings and fills in the safe defaults', () => {
    const validate = settingsValidator(lwm2mKind);
    expect(validate({})).toEqual([]);
    expect(validate({ port: 5683, bindAddress: '::', observe: ['3303/0/5700', '/3/0'] })).toEqual([]);
    expect(
      validate({ port: 80, bindAddress: 'plant.example', observe: ['temp'] }).map((p) => p.path),
    ).toEqual(['/config/port', '/config/bindAddress', '/config/observe/0']);
    expect(lwm2mSettings({})).toEqual({
      port: 5683,
      bindAddress: '127.0.0.1',
      observe: [],
      maxClients: 1000,
    });
  });

  it('writes at most 30 client entries a minute and counts the rest in the next minute', () => {
    vi.useFakeTimers({ now: new Date('2031-01-01T00:00:00Z') });
    try {
      const written: string[] = [];
      const log = new ClientLog((_level, message) => void written.push(message));
      for (let i = 0; i < MAX_LOG_PER_MINUTE + 5; i++) log.write('warn', `bad datagram ${i}`);
      expect(written).toHaveLength(MAX_LOG_PER_MINUTE);
      vi.advanceTimersByTime(60_000);
      log.write('info', 'sim-1 registered');
      expect(written.slice(MAX_LOG_PER_MINUTE)).toEqual([
        '5 more entries about LwM2M clients were left out in the last minute',
        'sim-1 registered',
      ]);
    } finally {
      vi.useRealTimers();
    }
  });
});
