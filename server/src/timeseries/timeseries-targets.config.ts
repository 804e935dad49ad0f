import { ConfigError } from '../config-values.js';

/**
 * `STELLWERK_TIMESERIES_TARGETS`: where points are stored, in order — the first is the primary
 * (serves reads while healthy), the others are secondaries. Entries are separated by commas:
 *
 *   postgres                                                  this server's PostgreSQL (ts_points)
 *   influxdb-v1+http://user:pass@host:8086/stellwerk          InfluxDB 1.x, database in the path
 *   influxdb-v2+https://host:8086/?org=acme&bucket=stw&token=…   InfluxDB 2.x (v2 write API, Flux reads)
 *   victoria-metrics+http://host:8428                         VictoriaMetrics (v2 write API, /api/v1/export reads)
 *
 * Query options: `name=` (the target's cursor key; default the kind, required when a kind is listed
 * twice), `measurement=` (default `states`). A target's name must never change while it has a
 * backlog: the name is where its position in the outbox is stored.
 */

export type TimeSeriesTargetKind = 'postgres' | 'influxdb-v1' | 'influxdb-v2';

export interface TimeSeriesTargetSpec {
  name: string;
  kind: TimeSeriesTargetKind;
  /** influxdb-v2 only: the server speaking the v2 write API. */
  flavor?: 'influxdb' | 'victoria-metrics';
  /** Base URL without credentials or query (http or https). */
  url?: string;
  measurement: string;
  /** influxdb-v1 */
  database?: string;
  username?: string;
  password?: string;
  /** influxdb-v2 (InfluxDB flavor) */
  org?: string;
  bucket?: string;
  token?: string;
}

export const DEFAULT_TIMESERIES_TARGETS: TimeSeriesTargetSpec[] = [
  { name: 'postgres', kind: 'postgres', measurement: 'states' },
];

const NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const IDENTIFIER = /^[A-Za-z0-9_-]{1,64}$/;
const FORMS =
  'postgres, influxdb-v1+http(s)://[user:pass@]host:port/database, ' +
  'influxdb-v2+http(s)://host:port/?org=…&bucket=…&token=…, victoria-metrics+http(s)://host:port';

function parseEntry(entry: string, variable: string): TimeSeriesTargetSpec {
  if (entry === 'postgres') return { name: 'postgres', kind: 'postgres', measurement: 'states' };
  const match = /^(influxdb-v1|influxdb-v2|victoria-metrics)\+(https?:\/\/.*)$/.exec(entry);
  if (!match) throw new ConfigError(variable, `has an unknown target "${redact(entry)}"; use ${FORMS}`);
  const scheme = match[1]!;
  let url: URL;
  try {
    url = new URL(match[2]!);
  } catch {
    throw new ConfigError(variable, `target "${redact(entry)}" is not a valid URL`);
  }
  const query = url.searchParams;
  const option = (key: string) => query.get(key)?.trim() || undefined;
  const known = ['name', 'measurement', 'org', 'bucket', 'token'];
  for (const key of query.keys()) {
    if (!known.includes(key))
      throw new ConfigError(variable, `target "${redact(entry)}" has an unknown option "${key}"`);
  }
  const measurement = option('measurement') ?? 'states';
  if (!IDENTIFIER.test(measurement))
    throw new ConfigError(variable, `measurement "${measurement}" must match ${IDENTIFIER.source}`);
  const name = option('name') ?? scheme;
  if (!NAME.test(name)) throw new ConfigError(variable, `target name "${name}" must match ${NAME.source}`);
  const base = `${url.protocol}//${url.host}`;
  if (scheme === 'influxdb-v1') {
    const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '')) || 'stellwerk';
    if (!IDENTIFIER.test(database))
      throw new ConfigError(variable, `InfluxDB database "${database}" must match ${IDENTIFIER.source}`);
    return {
      name,
      kind: 'influxdb-v1',
      url: base,
      measurement,
      database,
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    };
  }
  if (scheme === 'victoria-metrics') {
    return { name, kind: 'influxdb-v2', flavor: 'victoria-metrics', url: base, measurement };
  }
  const [org, bucket, token] = [option('org'), option('bucket'), option('token')];
  if (!org || !bucket || !token)
    throw new ConfigError(variable, `influxdb-v2 target "${name}" needs org=, bucket= and token=`);
  return { name, kind: 'influxdb-v2', flavor: 'influxdb', url: base, measurement, org, bucket, token };
}

/** Hides passwords and tokens in error messages (they end up in logs). */
function redact(entry: string): string {
  return entry.replace(/\/\/[^/@]*@/, '//***@').replace(/token=[^&]*/, 'token=***');
}

export function parseTimeSeriesTargets(raw: string, variable: string): TimeSeriesTargetSpec[] {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new ConfigError(variable, `must list at least one target (${FORMS})`);
  const specs = entries.map((entry) => parseEntry(entry, variable));
  const seen = new Set<string>();
  for (const spec of specs) {
    if (seen.has(spec.name))
      throw new ConfigError(variable, `lists two targets named "${spec.name}"; give each its own name=`);
    seen.add(spec.name);
  }
  return specs;
}
