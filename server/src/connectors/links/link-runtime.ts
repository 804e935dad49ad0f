import type { ConnectorOwner } from '../connector-owner.js';
import { setTimeout as wait } from 'node:timers/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { isPermanentRefusal, MAX_CLIENT_PAYLOAD_BYTES, type PacketSink } from '../../ingest/ingest.types.js';
import { couldNotConnect, refusalOf } from '../../outgoing/dial/connect-failure.js';
import type { DialOut } from '../../outgoing/dial/dial-out.js';
import { TARGET_REFUSED } from '../../outgoing/target-guard.js';
import type { SecretBox } from '../../platform/crypto/secret-box.js';
import type { Lifecycle } from '../../platform/lifecycle.js';
import type { Metrics } from '../../platform/metrics.js';
import { Connector, type ConnectorLogLevel } from '../connector.entity.js';
import type { WebhookItem } from '../connector-kind.js';
import type { ConnectorTelemetry } from '../connector-telemetry.js';
import { openSecret } from '../kinds/config-fields.js';
import {
  LinkError,
  type LinkContext,
  type LinkDriver,
  type LinkHost,
  type LinkSession,
} from './link.types.js';

/** Reconnects back off from 1 s to 60 s; a link that stayed up this long starts again from 1 s. */
export const MIN_BACKOFF_MS = 1000;
export const MAX_BACKOFF_MS = 60_000;
const STABLE_MS = 60_000;

interface Running {
  connector: Connector;
  driver: LinkDriver;
  abort: AbortController;
  session: LinkSession | undefined;
  /** The last failure logged: a run of equal failures is logged once. */
  lastError: string | undefined;
  loop: Promise<void>;
  /** What the kind keeps across the reconnects of this run (LinkContext.kept). */
  kept: Map<string, unknown>;
}

export interface LinkRuntimeDeps {
  orm: MikroORM;
  sink: PacketSink;
  telemetry: Pick<ConnectorTelemetry, 'record' | 'write'>;
  secretBox: SecretBox;
  dial: DialOut;
  log: FastifyBaseLogger;
  metrics: Metrics;
  /** Tests shorten the backoff; the server keeps the defaults. */
  backoff?: { minMs: number; maxMs: number };
  /** Cluster mode: each link runs on one node (connector-owner.ts). */
  owner?: ConnectorOwner;
}

/**
 * Keeps the links of every active connector whose kind registered a link driver (link.types.ts):
 * one loop per connector that opens the link, waits for it to drop, logs why and opens it again
 * after a backoff. Connection changes go to the connector log (a run of equal failures once),
 * `stellwerk_connector_link_up` and `stellwerk_connector_link_drops_total` to /metrics, and
 * `isConnected` to connector monitoring (status "connected"/"disconnected", the "status duration"
 * rule). Packets go to the packet store with the same acknowledgement rules as mqtt-in.
 */
export class LinkRuntime implements Lifecycle, LinkHost {
  readonly name = 'connector-links';
  private readonly drivers = new Map<string, LinkDriver>();
  private readonly running = new Map<string, Running>();
  private stopped = false;
  private readonly drops;
  private readonly minMs: number;
  private readonly maxMs: number;

  constructor(private readonly deps: LinkRuntimeDeps) {
    this.minMs = deps.backoff?.minMs ?? MIN_BACKOFF_MS;
    this.maxMs = deps.backoff?.maxMs ?? MAX_BACKOFF_MS;
    this.drops = deps.metrics.counter(
      'stellwerk_connector_link_drops_total',
      'Links of field-protocol connectors that were lost after they had been open',
      ['connector', 'kind'],
    );
    deps.metrics.gauge(
      'stellwerk_connector_link_up',
      'Whether the link of a field-protocol connector is open (1) or down (0)',
      ['connector', 'kind'],
      (gauge) => {
        gauge.reset();
        for (const [id, run] of this.running)
          gauge.set({ connector: id, kind: run.connector.type }, this.isConnected(id) ? 1 : 0);
      },
    );
  }

  register(type: string, driver: LinkDriver): void {
    this.drivers.set(type, driver);
  }

  /** Server start: a link for every active connector of a registered kind. */
  async start(): Promise<void> {
    this.stopped = false;
    if (this.drivers.size === 0) return;
    const connectors = await this.deps.orm.em
      .fork()
      .find(Connector, { type: { $in: [...this.drivers.keys()] }, active: true });
    for (const connector of connectors) await this.startLink(connector);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running.keys()].map((id) => this.stopLink(id)));
  }

  isConnected(connectorId: string): boolean {
    const session = this.running.get(connectorId)?.session;
    return session !== undefined && (session.connected?.() ?? true);
  }

  session(connectorId: string): LinkSession | undefined {
    return this.running.get(connectorId)?.session;
  }

  /** (Re)starts the connector's link with its current settings. */
  async startLink(connector: Connector): Promise<void> {
    await this.stopLink(connector.id);
    const driver = this.drivers.get(connector.type);
    if (this.stopped || !driver) return;
    const owner = this.deps.owner;
    const retry = () => this.startLink(connector);
    if (owner && !(await owner.claim(connector.id, retry, () => this.stopLink(connector.id)))) return;
    const run: Running = {
      connector,
      driver,
      abort: new AbortController(),
      session: undefined,
      lastError: undefined,
      loop: Promise.resolve(),
      kept: new Map(),
    };
    this.running.set(connector.id, run);
    run.loop = this.keep(run).catch((error: unknown) =>
      this.deps.log.error({ err: error, connectorId: connector.id }, 'connector link loop failed'),
    );
  }

  async stopLink(connectorId: string): Promise<void> {
    await this.deps.owner?.release(connectorId);
    const run = this.running.get(connectorId);
    if (!run) return;
    this.running.delete(connectorId);
    run.abort.abort();
    const session = run.session;
    run.session = undefined;
    await session?.close().catch(() => undefined);
    await run.loop;
  }

  /** Open, wait for the drop, back off, again: until the connector is stopped. */
  private async keep(run: Running): Promise<void> {
    const { signal } = run.abort;
    const id = run.connector.id;
    const target = run.driver.target(run.connector);
    const stopped = aborted(signal);
    let backoff = this.minMs;
    while (!signal.aborted) {
      let session: LinkSession;
      try {
        session = await run.driver.open(this.context(run));
      } catch (error) {
        if (signal.aborted) return;
        this.failed(run, error, target);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, this.maxMs);
        continue;
      }
      if (signal.aborted) {
        await session.close().catch(() => undefined);
        return;
      }
      run.session = session;
      run.lastError = undefined;
      const openedAt = Date.now();
      this.write(id, 'info', `Connected to ${target}`);
      const reason = await Promise.race([session.closed, stopped]);
      run.session = undefined;
      if (signal.aborted) return;
      this.drops.inc({ connector: id, kind: run.connector.type });
      this.write(id, 'warn', `Disconnected from ${target}: ${reason}`);
      await session.close().catch(() => undefined);
      if (Date.now() - openedAt >= STABLE_MS) backoff = this.minMs;
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, this.maxMs);
    }
  }

  /** Why an attempt failed, in words a tenant may read; logged once for a run of equal failures. */
  private failed(run: Running, error: unknown, target: string): void {
    const refused = refusalOf(error);
    let message: string;
    let details: Record<string, unknown> | undefined;
    if (refused) {
      message = refused.message;
      details = { code: TARGET_REFUSED };
    } else if (error instanceof LinkError) {
      message = error.message;
      details = error.details;
    } else {
      message = couldNotConnect(target);
      this.deps.dial.connectFailed(error, { connectorId: run.connector.id, target });
    }
    if (run.lastError === message) return;
    run.lastError = message;
    this.write(run.connector.id, 'error', message, details);
  }

  private context(run: Running): LinkContext {
    const id = run.connector.id;
    return {
      connector: run.connector,
      dial: this.deps.dial,
      signal: run.abort.signal,
      serverLog: this.deps.log,
      secret: (key) => openSecret(run.connector.config, key, { secretBox: this.deps.secretBox }),
      log: (level, message, details) => this.write(id, level, message, details),
      packet: (item) => this.packet(run.connector, item),
      kept: <T>(key: string, create: () => T): T => {
        if (!run.kept.has(key)) run.kept.set(key, create());
        return run.kept.get(key) as T;
      },
    };
  }

  private write(id: string, level: ConnectorLogLevel, message: string, details?: Record<string, unknown>) {
    void this.deps.telemetry.write(id, level, message, details);
  }

  /** One packet into the store; a permanent refusal is logged and resolves, a transient one rejects. */
  private async packet(connector: Connector, item: WebhookItem): Promise<void> {
    const id = connector.id;
    const refuse = (message: string, details: Record<string, unknown>) => {
      this.deps.telemetry.record(id, 'failed');
      this.write(id, 'warn', message, { deviceId: item.deviceKey.slice(0, 200), ...details });
    };
    if (item.payload.length > MAX_CLIENT_PAYLOAD_BYTES)
      return refuse(
        `Packet refused: ${item.payload.length} bytes is more than ${MAX_CLIENT_PAYLOAD_BYTES}`,
        {},
      );
    if (!item.deviceKey || item.deviceKey.length > 200)
      return refuse('Packet refused: no usable device id', {});
    try {
      await this.deps.sink.append({
        connectorId: id,
        deviceKey: item.deviceKey,
        payload: item.payload,
        source: connector.type,
        receivedAt: new Date(),
        ...(item.meta ? { meta: item.meta } : {}),
      });
    } catch (error) {
      if (isPermanentRefusal(error)) return refuse(`Packet refused: ${error.message}`, { code: error.code });
      this.deps.telemetry.record(id, 'failed');
      throw error;
    }
    this.deps.telemetry.record(id, 'in');
  }
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  wait(ms, undefined, { signal }).catch(() => undefined);

const aborted = (signal: AbortSignal): Promise<string> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve('stopped');
    signal.addEventListener('abort', () => resolve('stopped'), { once: true });
  });
