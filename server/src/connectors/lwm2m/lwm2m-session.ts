import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { Agent, createServer, type IncomingMessage, type OutgoingMessage, type Server } from 'coap';
import { DeliveryError } from '../../outgoing/delivery.js';
import type { LinkContext, LinkSession } from '../links/link.types.js';
import { ClientLog } from './lwm2m-log.js';
import { FORMAT_LABEL, decodeLwm2m, formatNumber } from './lwm2m-content.js';
import {
  DEFAULT_LIFETIME_SECONDS,
  RegisterError,
  objectLinks,
  offers,
  registerParams,
} from './lwm2m-registration.js';

/** An lwm2m connector's settings as the session uses them (defaults applied). */
export interface Lwm2mSettings {
  port: number;
  bindAddress: string;
  observe: string[];
  maxClients: number;
}

interface Registration {
  id: string;
  endpoint: string;
  address: string;
  port: number;
  lifetimeSeconds: number;
  links: string[];
  timer: NodeJS.Timeout | undefined;
  /** Observations to cancel when the registration ends (their streams). */
  observations: Array<{ close(): void }>;
}

export interface Lwm2mReply {
  code: string;
  payload: Buffer;
  format: unknown;
}

const MAX_TIMER_MS = 2 ** 31 - 1;
/** How long a client has to answer a read, write or execute. */
const REQUEST_TIMEOUT_MS = 20_000;

const reply = (res: OutgoingMessage, code: string) => {
  res.code = code;
  res.end();
};

/**
 * The running LwM2M server of one connector: a CoAP server and a CoAP client (for observe, read,
 * write and execute) on one UDP socket, so clients behind NAT see requests come from the address
 * they registered with. "Connected" for monitoring means at least one client is registered: the
 * socket listening says nothing about whether devices reach it.
 */
export class Lwm2mSession implements LinkSession {
  readonly closed: Promise<string>;
  private resolveClosed!: (reason: string) => void;
  private readonly byId = new Map<string, Registration>();
  private readonly byEndpoint = new Map<string, Registration>();
  private readonly server: Server;
  private readonly agent: Agent;
  private ending = false;
  private readonly clientLog: ClientLog;

  constructor(
    private readonly ctx: LinkContext,
    private readonly settings: Lwm2mSettings,
    private readonly socket: Socket,
    private readonly release: () => void,
  ) {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.clientLog = new ClientLog((level, message, details) => ctx.log(level, message, details));
    this.server = createServer({ type: isIPv6(settings.bindAddress) ? 'udp6' : 'udp4' });
    this.server.on('request', (req: IncomingMessage, res: OutgoingMessage) => void this.handle(req, res));
    this.server.on('error', (error: Error) => this.lost(error));
    this.server.listen(socket);
    this.agent = new Agent({ socket });
    this.agent.on('error', (error: Error) => this.lost(error));
    socket.on('close', () => this.lost(new Error('the UDP socket closed')));
  }

  /** Whether at least one client is registered (connector monitoring's "connected"). */
  connected(): boolean {
    return this.byId.size > 0;
  }

  close(): Promise<void> {
    return this.shutdown('stopped');
  }

  private async shutdown(reason: string): Promise<void> {
    if (this.ending) return;
    this.ending = true;
    this.resolveClosed(reason);
    for (const registration of [...this.byId.values()]) this.drop(registration);
    this.agent.close();
    this.server.close();
    // Retransmission timers of the coap package (a separate response still in flight) outlive
    // the socket, and a send on a closed socket throws from the timer: it becomes a no-op instead.
    this.socket.send = () => undefined;
    await new Promise<void>((resolve) => {
      try {
        this.socket.close(() => resolve());
      } catch {
        resolve(); // already closed
      }
    });
    this.release();
  }

  private lost(error: Error): void {
    if (this.ending) return;
    this.ctx.serverLog.warn({ err: error, connectorId: this.ctx.connector.id }, 'LwM2M socket failed');
    void this.shutdown('the UDP socket failed');
  }

  private async handle(req: IncomingMessage, res: OutgoingMessage): Promise<void> {
    try {
      const segments = new URL(req.url, 'coap://server').pathname.split('/').filter(Boolean);
      if (segments[0] === 'rd' && segments.length === 1 && req.method === 'POST')
        return this.register(req, res);
      if (segments[0] === 'rd' && segments.length === 2 && req.method === 'POST')
        return this.update(segments[1]!, req, res);
      if (segments[0] === 'rd' && segments.length === 2 && req.method === 'DELETE')
        return this.deregister(segments[1]!, res);
      if (segments[0] === 'dp' && segments.length === 1 && req.method === 'POST')
        return await this.send(req, res);
      reply(res, '4.04');
    } catch (error) {
      this.ctx.serverLog.warn({ err: error, connectorId: this.ctx.connector.id }, 'LwM2M request failed');
      reply(res, '5.00');
    }
  }

  private register(req: IncomingMessage, res: OutgoingMessage): void {
    const from = `${req.rsinfo.address}:${req.rsinfo.port}`;
    let params;
    try {
      params = registerParams(req.url);
      if (!params.endpoint) throw new RegisterError('the endpoint name (ep) is missing');
    } catch (error) {
      this.clientLog.write('warn', `Registration from ${from} refused: ${(error as Error).message}`);
      return reply(res, '4.00');
    }
    const endpoint = params.endpoint;
    const earlier = this.byEndpoint.get(endpoint);
    if (earlier) this.drop(earlier);
    if (this.byId.size >= this.settings.maxClients) {
      this.clientLog.write(
        'warn',
        `Registration of ${endpoint} refused: ${this.settings.maxClients} clients are registered`,
      );
      return reply(res, '5.03');
    }
    const registration: Registration = {
      id: randomBytes(6).toString('hex'),
      endpoint,
      address: req.rsinfo.address,
      port: req.rsinfo.port,
      lifetimeSeconds: params.lifetimeSeconds ?? DEFAULT_LIFETIME_SECONDS,
      links: objectLinks(req.payload),
      timer: undefined,
      observations: [],
    };
    this.byId.set(registration.id, registration);
    this.byEndpoint.set(endpoint, registration);
    this.arm(registration);
    res.setOption('Location-Path', [Buffer.from('rd'), Buffer.from(registration.id)]);
    reply(res, '2.01');
    this.clientLog.write(
      'info',
      `${endpoint} registered${earlier ? ' again' : ''} (lifetime ${registration.lifetimeSeconds} s, LwM2M ${params.version ?? '1.0'})`,
      { endpoint, address: from, objects: registration.links.slice(0, 50) },
    );
    this.observeAll(registration);
  }

  private update(id: string, req: IncomingMessage, res: OutgoingMessage): void {
    const registration = this.byId.get(id);
    if (!registration) return reply(res, '4.04');
    let params;
    try {
      params = registerParams(req.url);
    } catch (error) {
      this.clientLog.write('warn', `Update of ${registration.endpoint} refused: ${(error as Error).message}`);
      return reply(res, '4.00');
    }
    if (params.lifetimeSeconds !== undefined) registration.lifetimeSeconds = params.lifetimeSeconds;
    if (req.payload.length > 0) registration.links = objectLinks(req.payload);
    const moved = registration.address !== req.rsinfo.address || registration.port !== req.rsinfo.port;
    registration.address = req.rsinfo.address;
    registration.port = req.rsinfo.port;
    this.arm(registration);
    reply(res, '2.04');
    // A client whose address changed (NAT rebinding) is observed again at its new address.
    if (moved || req.payload.length > 0) {
      for (const observation of registration.observations.splice(0)) observation.close();
      this.observeAll(registration);
    }
  }

  private deregister(id: string, res: OutgoingMessage): void {
    const registration = this.byId.get(id);
    if (!registration) return reply(res, '4.04');
    this.drop(registration);
    reply(res, '2.02');
    this.clientLog.write('info', `${registration.endpoint} de-registered`, {
      endpoint: registration.endpoint,
    });
  }

  /** LwM2M 1.1 Send: a registered client posts values without being asked (SenML). */
  private async send(req: IncomingMessage, res: OutgoingMessage): Promise<void> {
    const { address, port } = req.rsinfo;
    const registration = [...this.byId.values()].find((r) => r.address === address && r.port === port);
    if (!registration) {
      this.clientLog.write(
        'warn',
        `Values sent from ${address}:${port}, where no client is registered, were refused`,
      );
      return reply(res, '4.03');
    }
    const stored = await this.values(
      registration,
      undefined,
      req.payload,
      req.headers['Content-Format'],
      'send',
    );
    reply(res, stored === 'stored' ? '2.04' : stored === 'unreadable' ? '4.00' : '5.03');
  }

  /** Starts a lapse timer of the registration's lifetime; an update restarts it. */
  private arm(
    registration: Registration,
    expiresAt = Date.now() + registration.lifetimeSeconds * 1000,
  ): void {
    clearTimeout(registration.timer);
    // setTimeout holds at most 2^31-1 ms (24.8 days); longer lifetimes wait in steps.
    registration.timer = setTimeout(
      () => {
        if (this.byId.get(registration.id) !== registration) return;
        if (Date.now() < expiresAt) return this.arm(registration, expiresAt);
        this.drop(registration);
        this.clientLog.write(
          'warn',
          `Registration of ${registration.endpoint} lapsed: no update within its lifetime of ${registration.lifetimeSeconds} s`,
          { endpoint: registration.endpoint },
        );
      },
      Math.min(Math.max(expiresAt - Date.now(), 0), MAX_TIMER_MS),
    );
    registration.timer.unref();
  }

  private drop(registration: Registration): void {
    clearTimeout(registration.timer);
    for (const observation of registration.observations.splice(0)) observation.close();
    this.byId.delete(registration.id);
    if (this.byEndpoint.get(registration.endpoint) === registration)
      this.byEndpoint.delete(registration.endpoint);
  }

  private observeAll(registration: Registration): void {
    const missing: string[] = [];
    for (const path of this.settings.observe) {
      if (offers(registration.links, path)) this.observe(registration, path);
      else missing.push(path);
    }
    if (missing.length > 0)
      this.clientLog.write(
        'info',
        `${registration.endpoint} offers no object for ${missing.join(', ')}; not observed`,
      );
  }

  private observe(registration: Registration, path: string): void {
    const current = () => !this.ending && this.byId.get(registration.id) === registration;
    const req = this.agent.request({
      hostname: registration.address,
      port: registration.port,
      pathname: `/${path}`,
      method: 'GET',
      observe: true,
      confirmable: true,
    });
    req.on('response', (stream: IncomingMessage & { close(): void }) => {
      if (!current()) return stream.close();
      if (!stream.code.startsWith('2.')) {
        this.clientLog.write(
          'warn',
          `${registration.endpoint} refused the observation of ${path}: ${stream.code}`,
        );
        return stream.close();
      }
      registration.observations.push(stream);
      stream.on('data', (payload: Buffer) => {
        if (current())
          void this.values(registration, path, payload, stream.headers['Content-Format'], 'notify');
      });
      stream.on('error', () => undefined);
    });
    req.on('error', (error: Error) => {
      if (!current()) return;
      this.ctx.serverLog.debug({ err: error, connectorId: this.ctx.connector.id }, 'LwM2M observe failed');
      this.clientLog.write('warn', `${registration.endpoint} did not answer the observation of ${path}`);
    });
    req.end();
  }

  /**
   * One payload into a packet of the endpoint's device (`{ "3303/0/5700": 21.5 }`, `_meta.path`,
   * `_meta.format`, `_meta.operation`). Unreadable payloads go to the connector log.
   */
  async values(
    registration: { endpoint: string },
    path: string | undefined,
    payload: Buffer,
    formatOption: unknown,
    operation: 'notify' | 'send' | 'read',
  ): Promise<'stored' | 'unreadable' | 'busy'> {
    const format =
      formatOption === undefined || formatOption === null ? undefined : (formatNumber(formatOption) ?? -1);
    const where = path ? ` for ${path}` : '';
    let values;
    try {
      values = decodeLwm2m(payload, format, path);
    } catch (error) {
      this.clientLog.write(
        'warn',
        `Unreadable value from ${registration.endpoint}${where}: ${(error as Error).message}`,
        {
          endpoint: registration.endpoint,
          bytes: payload.length,
        },
      );
      return 'unreadable';
    }
    if (Object.keys(values).length === 0) return 'stored';
    try {
      await this.ctx.packet({
        deviceKey: registration.endpoint,
        payload: Buffer.from(JSON.stringify(values)),
        meta: {
          fields: {
            ...(path ? { path } : {}),
            format: FORMAT_LABEL[format ?? 0] ?? String(format),
            operation,
          },
        },
      });
      return 'stored';
    } catch {
      this.clientLog.write(
        'warn',
        `A value of ${registration.endpoint}${where} was not stored: the packet store is busy`,
      );
      return 'busy';
    }
  }

  /** A read, write or execute towards a registered client; rejects with a DeliveryError. */
  request(
    endpoint: string,
    call: { method: 'GET' | 'PUT' | 'POST'; path: string; payload?: Buffer; format?: number },
  ): Promise<Lwm2mReply> {
    const registration = this.byEndpoint.get(endpoint);
    if (!registration) return Promise.reject(new DeliveryError(`${endpoint} is not registered`, true));
    return new Promise((resolve, reject) => {
      const req = this.agent.request({
        hostname: registration.address,
        port: registration.port,
        pathname: `/${call.path}`,
        method: call.method,
        confirmable: true,
        ...(call.format !== undefined ? { options: { 'Content-Format': call.format } } : {}),
      });
      const timer = setTimeout(
        () =>
          reject(new DeliveryError(`${endpoint} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`, true)),
        REQUEST_TIMEOUT_MS,
      );
      req.on('response', (res: IncomingMessage) => {
        clearTimeout(timer);
        resolve({ code: res.code, payload: res.payload, format: res.headers['Content-Format'] });
      });
      req.on('error', () => {
        clearTimeout(timer);
        reject(new DeliveryError(`${endpoint} could not be reached`, true));
      });
      req.end(call.payload);
    });
  }
}
