import { describe, expect, it } from 'vitest';
import { packetColumns, quote } from './packet-columns.js';

describe('packet store parameters', () => {
  it('quotes text array elements so that commas, braces, quotes and backslashes survive', () => {
    expect(quote('a,b {c} "d" \\e')).toBe('"a,b {c} \\"d\\" \\\\e"');
    expect(quote('')).toBe('""');
  });

  it('cuts payloads apart by 1-based offsets and lengths, empty payloads included', () => {
    const receivedAt = new Date(1_700_000_000_123);
    const packets = [
      { connectorId: 'c1', deviceKey: 'd1', payload: Buffer.from('{"a":1}'), source: 'mqtt', receivedAt },
      { connectorId: 'c1', deviceKey: 'd2', payload: Buffer.alloc(0), source: 'mqtt', receivedAt },
      {
        connectorId: 'c2',
        deviceKey: 'd3',
        payload: Buffer.from([0, 255, 7]),
        source: 'webhook',
        receivedAt,
      },
    ];
    const [c, d, t, blob, o, l, s, m] = packetColumns(packets);
    expect([c, d, t, o, l, s]).toEqual([
      '{c1,c1,c2}',
      '{"d1","d2","d3"}',
      '{1700000000123,1700000000123,1700000000123}',
      '{1,8,8}',
      '{7,0,3}',
      '{"mqtt","mqtt","webhook"}',
    ]);
    expect(blob.subarray(7, 10)).toEqual(Buffer.from([0, 255, 7]));
    expect(m).toBeNull();
  });

  it('passes metadata as quoted JSON, NULL for packets without it, and none when no packet has any', () => {
    const receivedAt = new Date(1_700_000_000_123);
    const base = { connectorId: 'c1', payload: Buffer.alloc(0), source: 'webhook', receivedAt };
    const packets = [
      { ...base, deviceKey: 'a' },
      { ...base, deviceKey: 'b' },
      // jsonb refuses \u0000 and lone surrogates: dropped and replaced.
      { ...base, deviceKey: 'c', meta: { fPort: 2, topic: 'a"b\\c', decoded: { text: 'x\u0000y\ud800' } } },
      { ...base, deviceKey: 'd' },
    ];
    const json = '{"fPort":2,"topic":"a\\"b\\\\c","decoded":{"text":"xy\ufffd"}}';
    expect(packetColumns(packets)[7]).toBe(`{NULL,NULL,${quote(json)},NULL}`);
    expect(quote(json)).toBe(
      String.raw`"{\"fPort\":2,\"topic\":\"a\\\"b\\\\c\",\"decoded\":{\"text\":\"xy�\"}}"`,
    );
    expect(packetColumns(packets.slice(0, 2))[7]).toBeNull();
  });
});
