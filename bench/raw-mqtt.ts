import net from 'node:net';
import mqttPacket from 'mqtt-packet';
import { remainingLength } from '../server/src/broker/mqtt-framing.js';

/**
 * The least MQTT 3.1.1 client a fleet publisher needs: CONNECT, QoS 1 PUBLISH, PUBACK, PINGREQ.
 * mqtt.js costs the load generator about 50 µs of CPU per QoS 1 message (packet objects, a writable
 * stream, an outgoing store); at 10,000 msg/s that is half a CPU taken from the broker under test on
 * a 2-CPU machine. This client encodes each PUBLISH into one buffer and reads PUBACKs straight from
 * the socket's chunks (CONNECT and the rest, once per connection, come from mqtt-packet). Loopback
 * benchmarks only; it is not a general client (no QoS 2, no subscriptions, no reconnect).
 */

export interface RawClientOptions {
  host: string;
  port: number;
  clientId: string;
  username?: string;
  password?: string;
  /** Seconds; the owner sends `ping()` within it while the client is idle. */
  keepalive: number;
}

type Acked = (error?: Error) => void;

/** The remaining-length varint of a fixed header. */
function lengthBytes(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

const PINGREQ = mqttPacket.generate({ cmd: 'pingreq' });
const DISCONNECT = mqttPacket.generate({ cmd: 'disconnect' });

export class RawMqttClient {
  private readonly socket: net.Socket;
  private readonly pending = new Map<number, Acked>();
  private nextId = 1;
  private rest: Buffer | undefined;
  private connected?: (error?: Error) => void;
  private closed = false;

  constructor(private readonly options: RawClientOptions) {
    this.socket = net.connect({ host: options.host, port: options.port, noDelay: true });
    this.socket.on('data', (chunk: Buffer) => this.read(chunk));
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /** Resolves on CONNACK with return code 0. */
  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.connected = (error) => (error ? reject(error) : resolve());
      const { clientId, username, password, keepalive } = this.options;
      this.socket.write(
        mqttPacket.generate({
          cmd: 'connect',
          protocolId: 'MQTT',
          protocolVersion: 4,
          clean: true,
          clientId,
          keepalive,
          ...(username !== undefined ? { username } : {}),
          ...(password !== undefined ? { password: Buffer.from(password) } : {}),
        }),
      );
    });
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** `topic` as prepared by `topicField`; `payload` ASCII (the fleet shape's JSON). */
  publish(topic: Buffer, payload: string, acked: Acked): void {
    if (this.closed) return acked(new Error('connection closed'));
    const id = this.nextId;
    this.nextId = id === 0xffff ? 1 : id + 1;
    const remaining = topic.length + 2 + payload.length;
    const header = lengthBytes(remaining);
    const packet = Buffer.allocUnsafe(1 + header.length + remaining);
    let at = 0;
    packet[at++] = 0x32; // PUBLISH, QoS 1
    for (const b of header) packet[at++] = b;
    at += topic.copy(packet, at);
    packet[at++] = id >> 8;
    packet[at++] = id & 0xff;
    packet.write(payload, at, 'latin1');
    this.pending.set(id, acked);
    this.socket.write(packet);
  }

  ping(): void {
    if (!this.closed) this.socket.write(PINGREQ);
  }

  /** DISCONNECT, then the socket's end. */
  end(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.end(DISCONNECT);
    });
  }

  private read(chunk: Buffer): void {
    let buf = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    this.rest = undefined;
    for (;;) {
      const length = remainingLength(buf, 1);
      if (!length || buf.length < 1 + length.bytes + length.value) break;
      const at = 1 + length.bytes;
      this.packet(buf[0]! >> 4, buf.subarray(at, at + length.value));
      buf = buf.subarray(at + length.value);
    }
    if (buf.length > 0) this.rest = Buffer.from(buf);
  }

  private packet(type: number, body: Buffer): void {
    if (type === 4) {
      // PUBACK
      const id = (body[0]! << 8) | body[1]!;
      const acked = this.pending.get(id);
      this.pending.delete(id);
      acked?.();
    } else if (type === 2) {
      // CONNACK
      const code = body[1];
      this.connected?.(code === 0 ? undefined : new Error(`CONNACK return code ${code}`));
      this.connected = undefined;
    }
    // PINGRESP (13) needs nothing.
  }

  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.connected?.(error);
    this.connected = undefined;
    for (const acked of this.pending.values()) acked(error);
    this.pending.clear();
  }
}

/** A topic's length-prefixed bytes, encoded once per client instead of once per message. */
export function topicField(topic: string): Buffer {
  const bytes = Buffer.from(topic, 'utf8');
  return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
}
