import { describe, expect, it } from 'vitest';
import {
  brokerAddress,
  exampleMessage,
  mosquittoPubLine,
  shellQuote,
  uplinkTopic,
} from './device-connection';

describe('device connection', () => {
  it('reads host and port from the broker endpoint, with defaults per scheme', () => {
    expect(brokerAddress('mqtt://broker.site:1884')).toEqual({ host: 'broker.site', port: '1884' });
    expect(brokerAddress('mqtt://10.0.0.2')).toEqual({ host: '10.0.0.2', port: '1883' });
    expect(brokerAddress('mqtt://[::1]:1883')).toEqual({ host: '::1', port: '1883' });
    expect(brokerAddress('https://example.test/hook')).toBeNull();
    expect(brokerAddress(null)).toBeNull();
  });

  it('quotes for a POSIX shell only what needs it', () => {
    expect(shellQuote('connectors/abc/devices/pump-1/up')).toBe('connectors/abc/devices/pump-1/up');
    expect(shellQuote('{"a":1}')).toBe(`'{"a":1}'`);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('<password>')).toBe(`'<password>'`);
  });

  it('builds a pasteable line with the target variables as the example message', () => {
    const message = exampleMessage([
      { key: 'pressure', type: 'number' },
      { key: 'on', type: 'boolean' },
      { key: '_raw' },
    ]);
    expect(message).toBe('{"pressure":21.5,"on":true}');
    expect(exampleMessage()).toBe('{"value":1}');
    const line = mosquittoPubLine({
      host: '127.0.0.1',
      port: '1883',
      username: 'c-1',
      password: 'p w',
      topic: uplinkTopic('c1', 'pump 1'),
      message,
    });
    expect(line).toBe(
      `mosquitto_pub -h 127.0.0.1 -p 1883 -u c-1 -P 'p w' -q 1 -t 'connectors/c1/devices/pump 1/up' -m '{"pressure":21.5,"on":true}'`,
    );
  });
});
