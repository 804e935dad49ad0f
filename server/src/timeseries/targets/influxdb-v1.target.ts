import type { PointFilter, TimeSeriesPoint, TimeSeriesTarget } from '../timeseries.types.js';
import { dedupeByStateAndTime, toLines } from './line-protocol.js';

export interface InfluxDbV1Options {
  name: string;
  /** Base URL, e.g. `http://127.0.0.1:8086`. */
  url: string;
  database: string;
  measurement: string;
  username?: string;
  password?: string;
  timeoutMs?: number;
}

interface InfluxV1Reply {
  results?: Array<{
    error?: string;
    series?: Array<{ columns: string[]; values: unknown[][] }>;
  }>;
  error?: string;
}

// `is_null` is selected so that points without value or text still come back as rows.
const COLUMNS = ['time', 'value', 'text', 'is_null', 'account_id', 'twin_id', 'state_id', 'state_key'];
/** Lines per `/write` request: InfluxDB's recommended 5,000–10,000 points per batch. */
const LINES_PER_REQUEST = 5000;

/**
 * InfluxDB 1.x through its HTTP API: `/write?precision=ms` with line protocol, `/query` with
 * bound parameters (`params`, never values pasted into InfluxQL). The database is created on the
 * first write (CREATE DATABASE is idempotent in 1.x).
 */
export class InfluxDbV1Target implements TimeSeriesTarget {
  readonly kind = 'influxdb-v1' as const;
  readonly name: string;
  private databaseReady = false;

  constructor(private readonly options: InfluxDbV1Options) {
    this.name = options.name;
  }

  async write(points: TimeSeriesPoint[]): Promise<void> {
    if (points.length === 0) return;
    if (!this.databaseReady) await this.createDatabase();
    const lines = toLines(points, this.options.measurement);
    for (let start = 0; start < lines.length; start += LINES_PER_REQUEST) {
      const body = lines.slice(start, start + LINES_PER_REQUEST).join('\n');
      const write = () => this.request('/write', { db: this.options.database, precision: 'ms' }, body);
      let response = await write();
      if (response.status === 404) {
        // No database: dropped behind our back, or a just-started server did not create it. Once
        // more after creating it, so these points are not left to the next retry.
        await this.createDatabase();
        response = await write();
        if (response.status === 404) this.databaseReady = false;
      }
      if (response.status !== 204) throw await replyError('write', response);
    }
  }

  async readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]> {
    if (filter.stateIds.length === 0) return [];
    const params: Record<string, string | number> = {
      from: filter.from.toISOString(),
      to: filter.to.toISOString(),
    };
    const ids = filter.stateIds.map((id, i) => {
      params[`s${i}`] = id;
      return `state_id = $s${i}`;
    });
    // Only parameter names are composed into the text; every value is a bound parameter.
    let q =
      `SELECT ${COLUMNS.slice(1).join(', ')} FROM "${this.options.measurement}" ` +
      `WHERE (${ids.join(' OR ')}) AND time >= $from AND time < $to ORDER BY time ASC`;
    if (filter.limit !== undefined) q += ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
    const response = await this.request('/query', {
      db: this.options.database,
      epoch: 'ms',
      q,
      params: JSON.stringify(params),
    });
    if (response.status !== 200) throw await replyError('query', response);
    const reply = (await response.json()) as InfluxV1Reply;
    const result = reply.results?.[0];
    const error = failureOf(reply);
    if (error) {
      // A database that does not exist yet holds no points.
      if (/database not found/.test(error)) return [];
      throw new Error(`InfluxDB query failed: ${error}`);
    }
    const points: TimeSeriesPoint[] = [];
    for (const series of result?.series ?? []) {
      const at = (name: string) => series.columns.indexOf(name);
      const [time, value, text, accountId, twinId, stateId, stateKey] = [
        'time',
        'value',
        'text',
        'account_id',
        'twin_id',
        'state_id',
        'state_key',
      ].map(at) as [number, number, number, number, number, number, number];
      for (const row of series.values) {
        points.push({
          accountId: asText(row[accountId]),
          twinId: asText(row[twinId]),
          stateId: asText(row[stateId]),
          stateKey: asText(row[stateKey]),
          time: new Date(Number(row[time])),
          value: typeof row[value] === 'number' ? row[value] : null,
          text: typeof row[text] === 'string' ? row[text] : null,
        });
      }
    }
    return dedupeByStateAndTime(points);
  }

  async health(): Promise<boolean> {
    try {
      const response = await this.request('/ping', {}, undefined, 2000);
      return response.status === 204;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {}

  private async createDatabase(): Promise<void> {
    // The name was checked against [A-Za-z0-9_-] at configuration time; InfluxQL cannot bind it.
    const response = await this.request('/query', { q: `CREATE DATABASE "${this.options.database}"` });
    if (response.status !== 200) throw await replyError('create database', response);
    const error = failureOf((await response.json().catch(() => ({}))) as InfluxV1Reply);
    if (error) throw new Error(`InfluxDB create database failed: ${error}`);
    this.databaseReady = true;
  }

  /** `/query` takes its parameters as a form body (no URL length limit for many state ids). */
  private request(
    path: '/write' | '/query' | '/ping',
    query: Record<string, string>,
    lines?: string,
    timeoutMs = this.options.timeoutMs ?? 10_000,
  ): Promise<Response> {
    const url = new URL(path, this.options.url);
    const headers: Record<string, string> = {};
    if (this.options.username !== undefined) {
      const credentials = `${this.options.username}:${this.options.password ?? ''}`;
      headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    }
    let body: string | URLSearchParams | undefined = lines;
    if (path === '/query') body = new URLSearchParams(query);
    else for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    return fetch(url, {
      method: path === '/ping' ? 'GET' : 'POST',
      headers,
      ...(body !== undefined ? { body } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
  }
}

/** A `/query` reply's error: InfluxDB 1.x answers 200 for a failed statement too. */
const failureOf = (reply: InfluxV1Reply): string | undefined =>
  reply.error ?? reply.results?.find((r) => r.error)?.error;

const asText = (value: unknown): string => (typeof value === 'string' ? value : '');

async function replyError(what: string, response: Response): Promise<Error> {
  const text = await response.text().catch(() => '');
  return new Error(`InfluxDB ${what} answered ${response.status}: ${text.slice(0, 300)}`);
}
