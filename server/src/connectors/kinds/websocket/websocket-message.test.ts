import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryError } from '../../../outgoing/delivery.js';
import { websocketKind } from '../websocket.kind.js';
import { parsePointer, resolvePointer, setPointer } from './json-pointer.js';
import { downlinkFrame } from './websocket-downlink.js';
import { readMessage, WebSocketMessageError, type MessageMatching } from './websocket-message.js';

const byPointer = (pointer: string): MessageMatching => ({
  messages: 'json',
  pointer: parsePointer(pointer)!,
  pointerText: pointer,
});
const text = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('JSON pointer', () => {
  it('reads the RFC 6901 examples', () => {
    // The document of RFC 6901, section 5.
    const doc = { foo: ['bar', 'baz'], '': 0, 'a/b': 1, 'm~n': 8, ' ': 7 };
    const at = (p: string) => resolvePointer(doc, parsePointer(p)!);
    expect(at('')).toBe(doc);
    expect(at('/foo/0')).toBe('bar');
    expect(at('/')).toBe(0);
    expect(at('/a~1b')).toBe(1);
    expect(at('/m~0n')).toBe(8);
    expect(at('/ ')).toBe(7);
    expect(at('/foo/01')).toBeUndefined();
    expect(at('/foo/-')).toBeUndefined();
    expect(parsePointer('foo')).toBeUndefined();
    expect(parsePointer('/a~2')).toBeUndefined();
  });

  it('writes into objects, never through arrays or the prototype', () => {
    const doc: Record<string, unknown> = { a: [1] };
    expect(setPointer(doc, ['meta', 'device'], 'x')).toBe(true);
    expect(doc).toEqual({ a: [1], meta: { device: 'x' } });
    expect(setPointer(doc, ['a', '0'], 'y')).toBe(false);
    expect(setPointer(doc, ['__proto__', 'polluted'], 'y')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('WebSocket messages', () => {
  it('makes one packet per object, of the device at the pointer, with the frame type as metadata', () => {
    const items = readMessage(
      text([
        { meter: { id: 'm-1' }, kWh: 3 },
        { meter: { id: 7 }, kWh: 4 },
      ]),
      false,
      byPointer('/meter/id'),
    );
    expect(items.map((i) => i.deviceKey)).toEqual(['m-1', '7']);
    expect(JSON.parse(items[1]!.payload.toString())).toEqual({ meter: { id: 7 }, kWh: 4 });
    expect(items[0]!.meta).toEqual({ fields: { frame: 'text' } });
  });

  it('hands a binary JSON message or any bytes to the fixed device', () => {
    const fixed = { messages: 'json', deviceId: 'line-4' } as const;
    const [json] = readMessage(text({ t: 1 }), true, fixed);
    expect(json).toMatchObject({ deviceKey: 'line-4', meta: { fields: { frame: 'binary' } } });
    const bytes = Buffer.from([0xff, 0x00, 0x10]);
    const [raw] = readMessage(bytes, true, { ...fixed, messages: 'any' });
    expect(raw!.payload).toEqual(bytes);
  });

  it('refuses what is no JSON object, or names no device, with a message a tenant can read', () => {
    const refused = (data: Buffer, binary = false, matching = byPointer('/id')) => {
      try {
        readMessage(data, binary, matching);
      } catch (error) {
        expect(error).toBeInstanceOf(WebSocketMessageError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(refused(text('hello'))).toBe('The message is not JSON (5 bytes)');
    expect(refused(Buffer.from([0xc3, 0x28]), true)).toBe(
      'The binary message is not UTF-8 text, so not JSON',
    );
    expect(refused(text(42))).toBe('The message holds a number where an object belongs');
    expect(refused(text([]))).toBe('A message holds 1 to 50 objects; this one 0');
    expect(refused(text({ id: { no: 1 } }))).toBe('No device id at /id: found an object');
    expect(refused(text({ other: 1 }))).toBe('No device id at /id: found nothing');
  });

  it('never throws anything but its own error, whatever the peer sends', () => {
    const matchings = fc.oneof(
      fc.constant<MessageMatching>({ messages: 'json', deviceId: 'd' }),
      fc.constant<MessageMatching>({ messages: 'any', deviceId: 'd' }),
      fc.string({ maxLength: 12 }).map((p) => byPointer(`/${p}`)),
    );
    const json = fc.json({ maxDepth: 4 }).map((s) => Buffer.from(s));
    const objects = fc
      .array(fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }), {
        maxLength: 60,
      })
      .map((a) => text(a.length === 1 ? a[0] : a));
    const payload = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
      json,
      objects,
    );
    fc.assert(
      fc.property(payload, fc.boolean(), matchings, (data, binary, matching) => {
        try {
          for (const item of readMessage(data, binary, matching)) {
            expect(item.deviceKey.length).toBeGreaterThan(0);
            expect(item.deviceKey.length).toBeLessThanOrEqual(200);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(WebSocketMessageError);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('WebSocket downlinks', () => {
  it('are JSON objects with the device id written at the pointer, or bytes as they are', () => {
    const frame = downlinkFrame(
      { url: 'ws://x', deviceIdPointer: '/target/id' },
      'valve-2',
      text({ open: true }),
    );
    expect(frame.binary).toBe(false);
    expect(JSON.parse(frame.data.toString())).toEqual({ open: true, target: { id: 'valve-2' } });
    const bytes = Buffer.from([1, 2, 3]);
    expect(downlinkFrame({ url: 'ws://x', downlinkFormat: 'binary' }, 'v', bytes)).toEqual({
      data: bytes,
      binary: true,
    });
    for (const bad of [Buffer.from([0x01, 0xa4]), text('[1]'), text('"on"')]) {
      expect(() => downlinkFrame({ url: 'ws://x' }, 'v', bad)).toThrow(DeliveryError);
    }
    expect(() => downlinkFrame({ url: 'ws://x' }, 'v', text('nope'))).toThrow(/not UTF-8 JSON/);
  });
});

describe('WebSocket settings', () => {
  const problems = (config: Record<string, unknown>) =>
    websocketKind.check!({ url: 'wss://feed.example/v1', ...config }).map((p) => `${p.path} ${p.message}`);

  it('take a device id pointer or a fixed device id, and headers the handshake does not set itself', () => {
    expect(problems({ deviceIdPointer: '/device/id', headers: { 'x-api-key': 'k' } })).toEqual([]);
    expect(problems({ deviceId: 'feed' })).toEqual([]);
    expect(problems({})).toEqual(['/config/deviceIdPointer set either deviceIdPointer or deviceId']);
    expect(problems({ deviceIdPointer: 'device' })).toContain(
      '/config/deviceIdPointer must be a JSON pointer such as /device/id (RFC 6901)',
    );
    expect(problems({ deviceId: 'd', headers: { 'Sec-WebSocket-Key': 'x', 'x-a': 'a\r\nb' } })).toEqual([
      '/config/headers/Sec-WebSocket-Key is not a header name the connector may set',
      '/config/headers/x-a must be one line of text',
    ]);
    expect(problems({ deviceId: 'd', url: 'http://feed.example' })).toEqual([
      '/config/url must be a ws:// or wss:// URL with a host',
    ]);
  });
});
