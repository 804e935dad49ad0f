import { createSocket, type Socket } from 'node:dgram';
import { Agent, createServer, type IncomingMessage, type OutgoingMessage, type Server } from 'coap';

/**
 * An LwM2M client built from the `coap` package, as the peer of the lwm2m connector's tests: it
 * registers (and updates within its lifetime), answers observe requests on 3303/0/5700 (SenML
 * CBOR) and 3/0/9 (TLV), a read of 3/0/0 (plain text), a write of 3311/0/5850 and an execute of
 * 3/0/4. Stopping it closes its socket without de-registering, as a client that lost power.
 */

/** SenML CBOR of one record `{bn: "/3303/0/", n: "5700", v: value}`, written by hand (RFC 8428 labels -2, 0, 2). */
export function senmlCborTemperature(value: number): Buffer {
  const double = Buffer.alloc(8);
  double.writeDoubleBE(value);
  return Buffer.concat([
    Buffer.from([0x81, 0xa3, 0x21, 0x68]),
    Buffer.from('/3303/0/'),
    Buffer.from([0x00, 0x64]),
    Buffer.from('5700'),
    Buffer.from([0x02, 0xfb]),
    double,
  ]);
}

/** TLV of resource 9 (battery level, an integer) with one byte. */
export const tlvBattery = (percent: number) => Buffer.from([0xc1, 0x09, percent]);

export class Lwm2mClientSimulator {
  readonly written: string[] = [];
  readonly executed: string[] = [];
  /** Observe requests received, by path, in order. */
  readonly observeRequests: string[] = [];
  temperature = 21.5;
  battery = 87;
  port = 0;
  location: string | undefined;
  private readonly streams = new Map<string, OutgoingMessage>();
  private socket: Socket | undefined;
  private agent: Agent | undefined;
  private server: Server | undefined;
  private updater: NodeJS.Timeout | undefined;

  constructor(
    private readonly serverPort: number,
    readonly endpoint: string,
    private readonly lifetimeSeconds: number,
  ) {}

  /** Binds (the same port again after a stop) and registers; resolves with the answer's code. */
  async start(): Promise<string> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(this.port, '127.0.0.1', () => resolve());
    });
    this.port = socket.address().port;
    this.socket = socket;
    this.server = createServer((req: IncomingMessage, res: OutgoingMessage) => this.handle(req, res));
    this.server.listen(socket);
    this.agent = new Agent({ socket });
    const answer = await this.request(
      'POST',
      '/rd',
      `ep=${this.endpoint}&lt=${this.lifetimeSeconds}&lwm2m=1.1&b=U`,
      '</>;rt="oma.lwm2m",</1/0>,</3/0>,</3303/0>,</3311/0>',
    );
    const location = answer._packet.options
      ?.filter((o) => o.name === 'Location-Path')
      .map((o) => o.value.toString());
    this.location = location?.join('/');
    // Updates at half the lifetime keep the registration, as LwM2M clients do.
    this.updater = setInterval(
      () => void this.request('POST', `/${this.location}`).catch(() => undefined),
      (this.lifetimeSeconds * 1000) / 2,
    );
    return answer.code;
  }

  /** Gone without a word: the registration lapses on the server. */
  async stop(): Promise<void> {
    clearInterval(this.updater);
    this.streams.clear();
    this.agent?.close();
    this.server?.close();
    const socket = this.socket!;
    socket.send = () => undefined;
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    this.socket = undefined;
  }

  /** A new temperature, notified to the observer (when there is one). */
  notify(value: number): void {
    this.temperature = value;
    this.streams.get('3303/0/5700')?.write(senmlCborTemperature(value));
  }

  /** Bytes as a notification of 3303/0/5700 in the given format (garbage for the bad-input case). */
  notifyRaw(bytes: Buffer, format: string): void {
    const stream = this.streams.get('3303/0/5700')!;
    stream.setOption('Content-Format', format);
    stream.write(bytes);
    stream.setOption('Content-Format', 'application/senml+cbor');
  }

  private request(
    method: 'POST' | 'DELETE',
    pathname: string,
    query?: string,
    body?: string,
  ): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.agent!.request({
        hostname: '127.0.0.1',
        port: this.serverPort,
        method,
        pathname,
        confirmable: true,
        ...(query ? { query } : {}),
        ...(body ? { options: { 'Content-Format': 'application/link-format' } } : {}),
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end(body);
    });
  }

  private handle(req: IncomingMessage, res: OutgoingMessage): void {
    const path = req.url.split('?')[0]!.replace(/^\/+/, '');
    if (req.method === 'GET' && req.headers.Observe === 0) {
      this.observeRequests.push(path);
      if (path === '3303/0/5700') {
        this.streams.set(path, res);
        res.setOption('Content-Format', 'application/senml+cbor');
        res.write(senmlCborTemperature(this.temperature));
        return;
      }
      if (path === '3/0/9') {
        res.setOption('Content-Format', 'application/vnd.oma.lwm2m+tlv');
        res.write(tlvBattery(this.battery));
        return;
      }
    }
    if (req.method === 'GET' && path === '3/0/0') {
      res.setOption('Content-Format', 'text/plain');
      return void res.end('Stellwerk Sim');
    }
    if (req.method === 'PUT' && path === '3311/0/5850') {
      this.written.push(req.payload.toString());
      res.code = '2.04';
      return void res.end();
    }
    if (req.method === 'POST' && path === '3/0/4') {
      this.executed.push(req.payload.toString());
      res.code = '2.04';
      return void res.end();
    }
    res.code = '4.04';
    res.end();
  }
}
