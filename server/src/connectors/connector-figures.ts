import type { EntityManager } from '@mikro-orm/postgresql';

export interface ConnectorCounts {
  total: number;
  active: number;
  inactive: number;
}

export interface PacketMinute {
  /** Start of the minute (UTC). */
  minute: Date;
  packetsIn: number;
  packetsFailed: number;
}

/** Connectors of an account by status (active or deactivated); the caller has checked connector.read. */
export async function connectorCounts(em: EntityManager, accountId: string): Promise<ConnectorCounts> {
  const rows = await em
    .getConnection()
    .execute<Array<{ active: boolean; n: number }>>(
      `SELECT active, count(*)::int AS n FROM connectors WHERE account_id = ? GROUP BY active`,
      [accountId],
    );
  const active = rows.find((r) => r.active)?.n ?? 0;
  const inactive = rows.find((r) => !r.active)?.n ?? 0;
  return { total: active + inactive, active, inactive };
}

/**
 * Packets of the account's connectors per minute in [from, to), from the minute buckets the
 * counter flush writes (connector-telemetry.ts): every minute of the range is answered, those
 * without packets with zeros. Reads at most one row per connector and minute, by primary key.
 */
export async function packetsPerMinute(
  em: EntityManager,
  accountId: string,
  from: Date,
  to: Date,
): Promise<PacketMinute[]> {
  const rows = await em.getConnection().execute<Array<{ minute: Date; i: number; f: number }>>(
    `SELECT m.minute, sum(m.packets_in)::int AS i, sum(m.packets_failed)::int AS f
       FROM connectors c
       JOIN connector_packet_minutes m ON m.connector_id = c.id AND m.minute >= ? AND m.minute < ?
      WHERE c.account_id = ?
      GROUP BY m.minute`,
    [from, to, accountId],
  );
  const byMinute = new Map(rows.map((r) => [new Date(r.minute).getTime(), r]));
  const minutes: PacketMinute[] = [];
  for (let at = from.getTime(); at < to.getTime(); at += 60_000) {
    const row = byMinute.get(at);
    minutes.push({ minute: new Date(at), packetsIn: row?.i ?? 0, packetsFailed: row?.f ?? 0 });
  }
  return minutes;
}
