/**
 * Reads points back from the external time-series servers through their own HTTP APIs, not through
 * Stellwerk's target classes: the end-to-end tests check what really landed there.
 */

/** One point as the end-to-end tests compare them: state key, epoch milliseconds, value. */
export interface SeenPoint {
  key: string;
  time: number;
  value: number | string | null;
}

/** Stable order: by state key, then time, then value. */
export const sortSeen = (points: SeenPoint[]): SeenPoint[] =>
  [...points].sort(
    (a, b) => a.key.localeCompare(b.key) || a.time - b.time || String(a.value).localeCompare(String(b.value)),
  );

interface InfluxSeries {
  tags?: Record<string, string>;
  columns: string[];
  values: Array<[number, number | null, string | null]>;
}

/**
 * Points of InfluxDB 1.x (`/query`, InfluxQL with bound parameters), grouped by `groupTag`
 * (`state_key` or `state_id`), as that tag, time and value (the number, else the text).
 */
export async function influxPoints(
  url: string,
  database: string,
  where: { tag: 'twin_id' | 'account_id'; value: string },
  groupTag: 'state_key' | 'state_id' = 'state_key',
): Promise<SeenPoint[]> {
  const query = new URLSearchParams({
    db: database,
    epoch: 'ms',
    q: `SELECT "value", "text" FROM "states" WHERE "${where.tag}" = $v GROUP BY "${groupTag}"`,
    params: JSON.stringify({ v: where.value }),
  });
  const response = await fetch(`${url}/query?${query.toString()}`, { signal: AbortSignal.timeout(10_000) });
  if (response.status !== 200) throw new Error(`influx /query: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { results: Array<{ series?: InfluxSeries[]; error?: string }> };
  const result = body.results[0]!;
  if (result.error) throw new Error(`influx /query: ${result.error}`);
  return (result.series ?? []).flatMap((series) =>
    series.values.map(([time, value, text]) => ({
      key: series.tags![groupTag]!,
      time,
      value: value ?? text,
    })),
  );
}

/**
 * Numeric samples of VictoriaMetrics (`/api/v1/export`, JSON lines) of `states_value` with the
 * given label, as the state key, time and value. Call `flush` on the peer first.
 */
export async function victoriaPoints(
  url: string,
  label: { name: 'twin_id' | 'account_id'; value: string },
): Promise<SeenPoint[]> {
  const match = `states_value{${label.name}=${JSON.stringify(label.value)}}`;
  const response = await fetch(
    `${url}/api/v1/export?${new URLSearchParams({ 'match[]': match }).toString()}`,
    {
      signal: AbortSignal.timeout(10_000),
    },
  );
  if (response.status !== 200)
    throw new Error(`victoria /export: ${response.status} ${await response.text()}`);
  const lines = (await response.text()).split('\n').filter((line) => line.trim() !== '');
  return lines.flatMap((line) => {
    const series = JSON.parse(line) as {
      metric: Record<string, string>;
      values: number[];
      timestamps: number[];
    };
    return series.timestamps.map((time, i) => ({
      key: series.metric.state_key!,
      time,
      value: series.values[i]!,
    }));
  });
}
