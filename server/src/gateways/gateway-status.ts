import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { GatewayStatusEvent } from '../connectors/network-events.js';
import { Connector } from '../connectors/connector.entity.js';
import type { OfflineGateway } from '../connector-monitoring/connector-monitoring.evaluator.js';
import { HOUR_MS } from './gateway-figures.js';

/** Told once per gateway that went offline (connector monitoring's `gateway-offline` rules). */
export type OfflineListener = (gateway: OfflineGateway, now: Date) => Promise<unknown>;

interface OfflineRow {
  id: string;
  connector_id: string | null;
  eui: string;
  title: string;
  last_seen_at: Date | null;
}

/**
 * Gateway status by the clock and by the network server.
 *
 * - `round(now)` (the leader timer, one node): every online gateway silent for longer than its
 *   window (its own `offlineAfterSeconds`, else STELLWERK_GATEWAY_OFFLINE_AFTER_SECONDS) goes
 *   offline in one statement; each one that did is reported to the offline listeners. Hour
 *   buckets older than the figures retention are deleted once an hour.
 * - `apply(event)`: a network server's gateway status (Loriot `gw`, ChirpStack gateway events …)
 *   for a gateway of the connector's account, by EUI: seen now; `online: false` takes it offline
 *   at once; a reported location replaces the stored one.
 *
 * Failure behaviour: a listener failure is logged; the status change stays (it is the truth).
 */
export class GatewayStatusKeeper {
  private readonly offlineListeners: OfflineListener[] = [];
  private lastRetentionAt = 0;

  constructor(
    private readonly o: {
      orm: MikroORM;
      log: FastifyBaseLogger;
      offlineAfterSeconds: number;
      figuresDays: number;
    },
  ) {}

  onOffline(listener: OfflineListener): void {
    this.offlineListeners.push(listener);
  }

  /** One evaluation at `now` (tests call it with their clock). Returns the ids that went offline. */
  async round(now: Date): Promise<string[]> {
    const connection = this.o.orm.em.getConnection();
    const rows = await connection.execute<OfflineRow[]>(
      `UPDATE gateways
          SET status = 'offline', status_changed_at = ?
        WHERE status = 'online'
          AND last_seen_at < ?::timestamptz - make_interval(secs => coalesce(offline_after_seconds, ?))
        RETURNING id, connector_id, eui, title, last_seen_at`,
      [now, now, this.o.offlineAfterSeconds],
    );
    await this.wentOffline(rows, now);
    if (now.getTime() - this.lastRetentionAt >= HOUR_MS) {
      this.lastRetentionAt = now.getTime();
      await connection.execute(`DELETE FROM gateway_reception_hours WHERE hour < ?`, [
        new Date(now.getTime() - this.o.figuresDays * 24 * HOUR_MS),
      ]);
    }
    return rows.map((r) => r.id);
  }

  /** A network server's word on a gateway of the connector's account. */
  readonly apply = async (event: GatewayStatusEvent): Promise<void> => {
    const em = this.o.orm.em.fork();
    const connector = await em.findOne(Connector, { id: event.connectorId }, { fields: ['account'] });
    if (!connector) return;
    const online = event.online !== false;
    const location = event.location;
    const rows = await em.getConnection().execute<Array<OfflineRow & { was: string }>>(
      `UPDATE gateways g
          SET last_seen_at = greatest(g.last_seen_at, ?::timestamptz),
              status = ?,
              status_changed_at = CASE WHEN g.status <> ? THEN ?::timestamptz ELSE g.status_changed_at END,
              latitude = coalesce(?, g.latitude), longitude = coalesce(?, g.longitude),
              altitude = CASE WHEN ?::float8 IS NULL THEN g.altitude ELSE ? END
         FROM gateways old
        WHERE old.id = g.id AND g.account_id = ? AND g.eui = ?
        RETURNING g.id, g.connector_id, g.eui, g.title, g.last_seen_at, old.status AS was`,
      [
        event.at,
        online ? 'online' : 'offline',
        online ? 'online' : 'offline',
        event.at,
        location?.latitude ?? null,
        location?.longitude ?? null,
        location ? (location.altitude ?? null) : null,
        location ? (location.altitude ?? null) : null,
        connector.account.id,
        event.gatewayEui.toLowerCase(),
      ],
    );
    if (!online)
      await this.wentOffline(
        rows.filter((r) => r.was === 'online'),
        event.at,
      );
  };

  private async wentOffline(rows: OfflineRow[], now: Date): Promise<void> {
    for (const row of rows) {
      if (!row.connector_id) continue;
      const gateway: OfflineGateway = {
        id: row.id,
        connectorId: row.connector_id,
        eui: row.eui,
        title: row.title,
        lastSeenAt: row.last_seen_at ? new Date(row.last_seen_at) : null,
      };
      for (const listener of this.offlineListeners) {
        try {
          await listener(gateway, now);
        } catch (error) {
          this.o.log.warn({ err: error, gatewayId: row.id }, 'gateway offline listener failed');
        }
      }
    }
  }
}
