import type { EntityManager } from '@mikro-orm/postgresql';

/** Uplinks and mean RSSI/SNR through a gateway over the last 24 hours. */
export interface GatewayFigures {
  uplinks24h: number;
  /** dBm; null without a reception that reported RSSI. */
  meanRssi24h: number | null;
  /** dB; null without a reception that reported SNR. */
  meanSnr24h: number | null;
}

export const HOUR_MS = 3_600_000;

/** The hour bucket a time falls into (its start). */
export const hourOf = (at: Date | number): Date => {
  const ms = typeof at === 'number' ? at : at.getTime();
  return new Date(ms - (ms % HOUR_MS));
};

const round = (value: number | null, digits: number) =>
  value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits;

/**
 * Sums the newest 24 hourly buckets (the current hour and the 23 before it) per gateway: one
 * indexed range read per list page, whatever the uplink rate was.
 */
export async function figuresOf(
  em: EntityManager,
  ids: readonly string[],
  now: Date,
): Promise<Map<string, GatewayFigures>> {
  const figures = new Map<string, GatewayFigures>(
    ids.map((id) => [id, { uplinks24h: 0, meanRssi24h: null, meanSnr24h: null }]),
  );
  if (ids.length === 0) return figures;
  const since = new Date(hourOf(now).getTime() - 23 * HOUR_MS);
  const rows = await em
    .getConnection()
    .execute<Array<{ gateway_id: string; uplinks: string; rssi: number | null; snr: number | null }>>(
      `SELECT gateway_id, sum(uplinks) AS uplinks,
            sum(rssi_sum) / nullif(sum(rssi_count), 0) AS rssi,
            sum(snr_sum) / nullif(sum(snr_count), 0) AS snr
       FROM gateway_reception_hours
      WHERE gateway_id IN (?) AND hour >= ?
      GROUP BY gateway_id`,
      [[...ids], since],
    );
  for (const row of rows) {
    figures.set(row.gateway_id, {
      uplinks24h: Number(row.uplinks),
      meanRssi24h: round(row.rssi === null ? null : Number(row.rssi), 1),
      meanSnr24h: round(row.snr === null ? null : Number(row.snr), 1),
    });
  }
  return figures;
}
