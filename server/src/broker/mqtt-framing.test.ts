import mqttPacket from 'mqtt-packet';
import { describe, expect, it } from 'vitest';
import { connectProtocolVersion, FrameSizeGuard } from './mqtt-framing.js';

const connect = (protocolVersion: 3 | 4 | 5) =>
  mqttPacket.generate({
    cmd: 'connect',
    protocolId: protocolVersion === 3 ? 'MQIsdp' : 'MQTT',
    protocolVersion,
    clientId: 'c1',
    clean: true,
    keepalive: 30,
    username: 'u',
    password: Buffer.from('p'),
  });

const publish = (bytes: number) =>
  mqttPacket.generate({
    cmd: 'publish',
    topic: 't',
    payload: Buffer.alloc(bytes),
    qos: 0,
    dup: false,
    retain: false,
  });

describe('connectProtocolVersion', () => {
  it('reads the protocol level of 3.1, 3.1.1 and 5 CONNECTs', () => {
    expect(connectProtocolVersion(connect(3))).toBe(3);
    expect(connectProtocolVersion(connect(4))).toBe(4);
    expect(connectProtocolVersion(connect(5))).toBe(5);
  });
  it('asks for more bytes on a prefix, refuses what is not a CONNECT', () => {
    const full = connect(5);
    for (let n = 0; n < 9; n++) expect(connectProtocolVersion(full.subarray(0, n))).toBeUndefined();
    expect(connectProtocolVersion(Buffer.from('GET / HTTP/1.1\r\n'))).toBeNull();
    expect(connectProtocolVersion(publish(3))).toBeNull();
    expect(connectProtocolVersion(Buffer.from([0x10, 0xff, 0xff, 0xff, 0xff]))).toBeNull();
  });
});

describe('FrameSizeGuard', () => {
  it('passes packets up to the limit, in any chunking', () => {
    const stream = Buffer.concat([
      connect(4),
      publish(100),
      publish(1000),
      mqttPacket.generate({ cmd: 'pingreq' }),
    ]);
    for (const size of [1, 3, 7, 64, stream.length]) {
      const guard = new FrameSizeGuard(1100);
      for (let i = 0; i < stream.length; i += size)
        expect(guard.feed(stream.subarray(i, i + size))).toBe(true);
    }
  });
  it('refuses a packet over the limit at its header, before the body arrives', () => {
    const guard = new FrameSizeGuard(1000);
    expect(guard.feed(publish(100))).toBe(true);
    const big = publish(5000);
    expect(guard.feed(big.subarray(0, 4))).toBe(false);
  });
  it('refuses a malformed five-byte length', () => {
    expect(new FrameSizeGuard(1 << 30).feed(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]))).toBe(false);
  });
});
