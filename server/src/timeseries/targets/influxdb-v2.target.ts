import { flux, InfluxDB, setLogger, type ParameterizedQuery } from '@influxdata/influxdb-client';
import type { PointFilter, TimeSeriesPoint, TimeSeriesTarget } from '../timeseries.types.js';
import { dedupeByStateAndTime, toLines } from './line-protocol.js';

export interface InfluxDbV2Options {
  name: string;
  url: string;
  /** `influxdb` (InfluxDB 2.x: Flux reads) or `victoria-metrics` (reads through /api/v1/export). */
  flavor: 'influxdb' | 'victoria-metrics';
  measurement: string;
  org?: string;
  bucket?: string;
  token?: string;
  timeoutMs?: number;
}

// The client logs every failed write to the console itself; the writer reports failures instead.
setLogger({ error: () => undefined, warn: () => undefined });

/**
 * The v2 write API through `@influxdata/influxdb-client` (InfluxDB 2.x, VictoriaMetrics). The
 * client's own retry buffer is switched off (`maxRetries: 0`): the outbox is the retry buffer,
 * and `write` must either store the whole batch or throw so the writer retries it later.
 */
export class InfluxDbV2Target implements TimeSeriesTarget {
  readonly kind = 'influxdb-v2' as const;
  readonly name: string;
  private readonly client: InfluxDB;

  constructor(private readonly options: InfluxDbV2Options) {
    this.name = options.name;
    this.client = new InfluxDB({
      url: options.url,
      ...(options.token ? { token: options.token } : {}),
      timeout: options.timeoutMs ?? 10_000,
    });
  }

  async write(points: TimeSeriesPoint[]): Promise<void> {
    if (points.length === 0) return;
    const writeApi = this.client.getWriteApi(
      this.options.org ?? 'stellwerk',
      this.options.bucket ?? 'stellwerk',
      'ms',
      { batchSize: 5000, flushInterval: 0, maxRetries: 0, maxBufferLines: points.length + 1 },
    );
    writeApi.writeRecords(toLines(points, this.options.measurement, this.options.flavor));
    await writeApi.close();
  }

  async readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]> {
    if (filter.stateIds.length === 0) return [];
    const points =
      this.options.flavor === 'victoria-metrics'
        ? await this.exportFromVictoriaMetrics(filter)
        : await this.queryFlux(filter);
    const deduped = dedupeByStateAndTime(points);
    return filter.limit === undefined ? deduped : deduped.slice(0, filter.limit);
  }

  async health(): Promise<boolean> {
    try {
      const path = this.options.flavor === 'victoria-metrics' ? '/health' : '/ping';
      const response = await fetch(new URL(path, this.options.url), { signal: AbortSignal.timeout(2000) });
      return response.ok;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}

  private async queryFlux(filter: PointFilter): Promise<TimeSeriesPoint[]> {
    const rows = await this.client
      .getQueryApi(this.options.org ?? 'stellwerk')
      .collectRows<Record<string, unknown>>(
        fluxReadQuery(this.options.bucket ?? 'stellwerk', this.options.measurement, filter),
      );
    return rows.map((row) => ({
      accountId: asText(row.account_id),
      twinId: asText(row.twin_id),
      stateId: asText(row.state_id),
      stateKey: asText(row.state_key),
      time: new Date(String(row._time)),
      value: typeof row.value === 'number' ? row.value : null,
      text: typeof row.text === 'string' ? row.text : null,
    }));
  }

  /** VictoriaMetrics: one JSON line per series (`states_value`, `states_is_text`, `states_is_null`). */
  private async exportFromVictoriaMetrics(filter: PointFilter): Promise<TimeSeriesPoint[]> {
    const url = new URL('/api/v1/export', this.options.url);
    const body = new URLSearchParams();
    for (const id of filter.stateIds) body.append('match[]', `{state_id=${JSON.stringify(id)}}`);
    body.set('start', String(filter.from.getTime() / 1000));
    body.set('end', String(filter.to.getTime() / 1000));
    const response = await fetch(url, {
      method: 'POST',
      body,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
    });
    if (!response.ok) {
      throw new Error(
        `VictoriaMetrics export answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
      );
    }
    const prefix = `${this.options.measurement}_`;
    const points: TimeSeriesPoint[] = [];
    for (const line of (await response.text()).split('\n')) {
      if (line.trim() === '') continue;
      const series = JSON.parse(line) as {
        metric: Record<string, string>;
        values: number[];
        timestamps: number[];
      };
      const field = series.metric.__name__?.startsWith(prefix)
        ? series.metric.__name__.slice(prefix.length)
        : '';
      if (!['value', 'is_text', 'is_null'].includes(field)) continue;
      series.timestamps.forEach((ms, i) => {
        if (ms < filter.from.getTime() || ms >= filter.to.getTime()) return;
        points.push({
          accountId: series.metric.account_id ?? '',
          twinId: series.metric.twin_id ?? '',
          stateId: series.metric.state_id ?? '',
          stateKey: series.metric.state_key ?? '',
          time: new Date(ms),
          value: field === 'value' ? (series.values[i] ?? null) : null,
          text: field === 'is_text' ? (series.metric.text ?? '') : null,
        });
      });
    }
    return points;
  }
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : '');

/** Flux for raw points of some states; values enter through the client's escaping `flux` template. */
export function fluxReadQuery(bucket: string, measurement: string, filter: PointFilter): ParameterizedQuery {
  const query = flux`from(bucket: ${bucket})
  |> range(start: ${filter.from}, stop: ${filter.to})
  |> filter(fn: (r) => r._measurement == ${measurement} and contains(value: r.state_id, set: ${filter.stateIds}))
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> sort(columns: ["_time"])`;
  if (filter.limit === undefined) return query;
  return flux`${query}
  |> limit(n: ${Math.max(0, Math.floor(filter.limit))})`;
}
