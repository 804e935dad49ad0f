import net from 'node:net';

/**
 * An IEC 60870-5-104 outstation (controlled station) for tests, written here from the standard's
 * frame formats and independent of the client's codec: it confirms STARTDT and TESTFR, answers a
 * general interrogation with its values (ACTCON, the values with cause 20, ACTTERM), confirms clock
 * synchronisation, records and confirms single and double commands (select and execute, or refuses
 * them), and sends whatever I-frames or raw bytes a test asks for. One connection at a time, on a
 * loopback port that stays the same across stop and start.
 */

export interface RecordedCommand {
  typeId: number;
  ioa: number;
  select: boolean;
  state: number;
}

const u = (code: number) => Buffer.from([0x68, 4, code, 0, 0, 0]);

/** An ASDU: type id, VSQ, cause of transmission (+ P/N), originator 0, common address, then the body. */
export function asdu(typeId: number, vsq: number, cot: number, ca: number, body: number[]): Buffer {
  return Buffer.from([typeId, vsq, cot, 0, ca & 0xff, ca >> 8, ...body]);
}

export const ioa = (n: number) => [n & 0xff, (n >> 8) & 0xff, n >> 16];
export const float32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return [...b];
};
export const int16 = (v: number) => [v & 0xff, (v >> 8) & 0xff];
export const int32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v);
  return [...b];
};
/** CP56Time2a of a UTC time. */
export function cp56(t: Date): number[] {
  const ms = t.getUTCSeconds() * 1000 + t.getUTCMilliseconds();
  return [
    ms & 0xff,
    ms >> 8,
    t.getUTCMinutes(),
    t.getUTCHours(),
    t.getUTCDate(),
    t.getUTCMonth() + 1,
    t.getUTCFullYear() - 2000,
  ];
}

export class Outstation {
  private server: net.Server | undefined;
  private socket: net.Socket | undefined;
  private sendSeq = 0;
  private recvSeq = 0;
  port = 0;
  connections = 0;
  /** The last receive sequence number the client acknowledged (S- or I-frame). */
  ackedByClient = 0;
  readonly commands: RecordedCommand[] = [];
  readonly clockSyncs: number[] = [];
  /** Set to make the next commands fail with a negative ACTCON. */
  refuseCommands = false;
  /**
   * Set to send the I-frames the client had not acknowledged again after its next STARTDT, as
   * outstations that keep their event buffer across connections do.
   */
  resendUnacknowledged = false;
  /** I-frames sent again so far (resendUnacknowledged). */
  resent = 0;
  /** Bodies of the I-frames sent on the current connection and not yet acknowledged, by send number. */
  private unacked: Array<{ seq: number; body: Buffer }> = [];

  constructor(private readonly interrogation: () => Buffer[]) {}

  async start(): Promise<void> {
    const server = net.createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    this.socket?.destroy();
    this.socket = undefined;
    await new Promise((resolve) => this.server?.close(resolve));
    this.server = undefined;
  }

  get connected(): boolean {
    return this.socket !== undefined && !this.socket.destroyed;
  }

  /** The I-frames sent on this connection that the client has not acknowledged yet. */
  get unacknowledged(): number {
    return this.unacked.length;
  }

  /** Ends the connection at once, as a lost network would; the listener stays for the next one. */
  dropConnection(): void {
    this.socket?.destroy();
  }

  /** Sends one I-frame with the next send sequence number. */
  send(body: Buffer): void {
    this.unacked.push({ seq: this.sendSeq, body });
    const control = Buffer.alloc(4);
    control.writeUInt16LE(this.sendSeq << 1, 0);
    control.writeUInt16LE(this.recvSeq << 1, 2);
    this.sendSeq = (this.sendSeq + 1) % 0x8000;
    this.socket?.write(Buffer.concat([Buffer.from([0x68, 4 + body.length]), control, body]));
  }

  raw(bytes: Buffer): void {
    this.socket?.write(bytes);
  }

  get sent(): number {
    return this.sendSeq;
  }

  private accept(socket: net.Socket): void {
    this.socket?.destroy();
    this.socket = socket;
    this.connections++;
    this.sendSeq = 0;
    this.recvSeq = 0;
    this.ackedByClient = 0;
    const left = this.unacked;
    this.unacked = [];
    let buffered = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= buffered[1]! + 2) {
        const frame = buffered.subarray(0, buffered[1]! + 2);
        buffered = buffered.subarray(frame.length);
        if (socket === this.socket) this.onFrame(frame, left);
      }
    });
  }

  private onFrame(frame: Buffer, left: Array<{ body: Buffer }>): void {
    const c1 = frame[2]!;
    if ((c1 & 0x03) === 0x03) {
      if (c1 === 0x07) {
        this.raw(u(0x0b)); // STARTDT act → con
        if (this.resendUnacknowledged)
          for (const { body } of left.splice(0)) {
            this.resent++;
            this.send(body);
          }
      }
      if (c1 === 0x43) this.raw(u(0x83)); // TESTFR act → con
      return;
    }
    this.ackedByClient = frame.readUInt16LE(4) >> 1;
    // Everything below the client's receive number is acknowledged (no wrap in these tests).
    this.unacked = this.unacked.filter((f) => f.seq >= this.ackedByClient);
    if ((c1 & 0x01) === 1) return; // S-frame
    this.recvSeq = (this.recvSeq + 1) % 0x8000;
    const body = frame.subarray(6);
    const typeId = body[0]!;
    const ca = body.readUInt16LE(4);
    const address = body.readUIntLE(6, 3);
    const mirror = (cot: number) => {
      const copy = Buffer.from(body);
      copy[2] = cot;
      this.send(copy);
    };
    if (typeId === 100) {
      mirror(7);
      for (const values of this.interrogation()) this.send(values);
      mirror(10);
    } else if (typeId === 103) {
      this.clockSyncs.push(ca);
      mirror(7);
    } else if (typeId === 45 || typeId === 46) {
      const element = body[9]!;
      const select = (element & 0x80) !== 0;
      this.commands.push({ typeId, ioa: address, select, state: element & (typeId === 45 ? 0x01 : 0x03) });
      if (this.refuseCommands) return mirror(7 | 0x40);
      mirror(7);
      if (!select) mirror(10);
    }
  }
}
