import type pg from 'pg';
import { now, rate, sleep } from './load.js';

/**
 * The twin side of `npm run bench:ingest`: every bench device carries a `referenceId`, one digital
 * twin per device has the same `referenceId` and one `dynamic-routing` state, so every packet becomes
 * a twin state change (state engine, in the ingest batch's transaction) and a time-series point
 * (`ts_outbox` → the postgres target's writer → `ts_points`).
 */

/** The routed device state: the publish time, different in every message, so every packet changes it. */
export const ROUTED_STATE_KEY = 't';
/** The postgres target's name (its row in `ts_target_cursors`) with the default configuration. */
const TARGET = 'postgres';

export const referenceIdOf = (deviceKey: string) => `bench-${deviceKey}`;

/**
 * Creates the twins and their states through the XAPI, as an operator would: each state creation
 * tells the state engine that definitions changed, so its routing index is reloaded before the next
 * batch (no waiting for the periodic reload).
 */
export async function createTwins(baseUrl: string, token: string, deviceKeys: string[]): Promise<number> {
  const post = async <T>(route: string, body: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const queue = [...deviceKeys];
  const worker = async () => {
    for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
      const twin = await post<{ id: string }>('/xapi/v1/digital-twins', {
        title: `bench ${key}`,
        referenceId: referenceIdOf(key),
      });
      await post(`/xapi/v1/digital-twins/${twin.id}/states`, {
        key: 'publish-time',
        title: 'Publish time',
        valueType: 'number',
        source: { type: 'dynamic-routing', stateKey: ROUTED_STATE_KEY },
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return deviceKeys.length;
}

/** A counter of the server's /metrics (summed over label sets), or 0 when it is not there yet. */
export async function metric(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{'))
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

export interface Backlog {
  rows: number;
  points: number;
}

/** Committed outbox rows (and their points) the postgres target's writer has not delivered yet. */
export async function backlog(db: pg.Client): Promise<Backlog> {
  const { rows } = await db.query<{ rows: number; points: string }>(
    `SELECT count(*)::int AS rows, coalesce(sum(count), 0)::bigint AS points FROM ts_outbox
      WHERE id > coalesce((SELECT outbox_id FROM ts_target_cursors WHERE target = $1), 0)`,
    [TARGET],
  );
  return { rows: rows[0]!.rows, points: Number(rows[0]!.points) };
}

export interface TwinFigures {
  /** Twin state value changes made by the state engine during the run. */
  changes: number;
  /** Per second, published → committed (with the ingest cursor, in the same transaction). */
  changesPerSecond: number;
  /** Rows added to ts_points during the run. */
  points: number;
  /** Per second, published → the last point is a row in ts_points. */
  pointsPerSecond: number;
  /** Not yet in ts_points when ingest had committed the last packet's states. */
  backlogAtParsed: Backlog;
  /** The largest backlog seen while the run was going (sampled about every 200 ms). */
  peakBacklog: Backlog;
  /** From ingest done to the last point in ts_points. */
  drainMs: number;
  /** False when the writer did not catch up within the deadline. */
  drained: boolean;
}

/**
 * Measures one scenario's twin states and time-series rows. Call `begin` before firing and `finish`
 * once the ingest cursor has passed the last packet (or the run gave up waiting).
 */
export class TwinProbe {
  private pointsBefore = 0;
  private changesBefore = 0;
  private peak: Backlog = { rows: 0, points: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: pg.Client,
    private readonly baseUrl: string,
  ) {}

  async begin(): Promise<void> {
    this.pointsBefore = await this.countPoints();
    this.changesBefore = await metric(this.baseUrl, 'stellwerk_state_changes_total');
    this.peak = { rows: 0, points: 0 };
    this.startSampling();
  }

  /** Samples the backlog every 200 ms until `finish` (an index range over the small, cleaned outbox). */
  private startSampling(): void {
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      void backlog(this.db)
        .then((b) => b.points > this.peak.points && (this.peak = b))
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, 200);
  }

  async finish(firedAt: number, parsedAt: number, deadlineMs = 120_000): Promise<TwinFigures> {
    clearInterval(this.timer);
    const endedAt = parsedAt || now();
    // Every outbox row of the run is committed now (same transaction as the cursor): the writer is
    // done once its cursor reaches the newest one. Rows already deleted were delivered before.
    const backlogAtParsed = await backlog(this.db);
    if (backlogAtParsed.points > this.peak.points) this.peak = backlogAtParsed;
    const { rows } = await this.db.query<{ last: string }>(
      'SELECT coalesce(max(id), 0) AS last FROM ts_outbox',
    );
    const last = BigInt(rows[0]!.last);
    let drainedAt = 0;
    const deadline = now() + deadlineMs;
    while (now() < deadline) {
      const cursor = await this.db.query<{ at: string }>(
        'SELECT outbox_id AS at FROM ts_target_cursors WHERE target = $1',
        [TARGET],
      );
      if (BigInt(cursor.rows[0]?.at ?? '0') >= last) {
        drainedAt = now();
        break;
      }
      await sleep(20);
    }
    const points = (await this.countPoints()) - this.pointsBefore;
    const changes = (await metric(this.baseUrl, 'stellwerk_state_changes_total')) - this.changesBefore;
    return {
      changes,
      changesPerSecond: parsedAt ? rate(changes, parsedAt - firedAt) : NaN,
      points,
      pointsPerSecond: drainedAt ? rate(points, drainedAt - firedAt) : NaN,
      backlogAtParsed,
      peakBacklog: this.peak,
      drainMs: drainedAt ? drainedAt - endedAt : NaN,
      drained: drainedAt > 0,
    };
  }

  private async countPoints(): Promise<number> {
    const { rows } = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM ts_points');
    return Number(rows[0]!.n);
  }
}

const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');

/** The scenario's extra output lines, below the ingestion figures. */
export function printTwinFigures(t: TwinFigures, expected: number): void {
  console.log(
    `  twin states updated    ${fmt(t.changesPerSecond)} states/s (${t.changes}/${expected} changes, committed with the ingest cursor)`,
  );
  console.log(
    `  ts_points rows e2e     ${fmt(t.pointsPerSecond)} rows/s (${t.points}/${expected} rows, published → row in ts_points)`,
  );
  console.log(
    `  ts writer backlog      ${fmt(t.backlogAtParsed.points)} points (${t.backlogAtParsed.rows} outbox rows) when ingest was done, ` +
      (t.drained ? `in ts_points ${fmt(t.drainMs)} ms later` : 'NOT drained within the deadline') +
      `; peak during the run ${fmt(t.peakBacklog.points)} points (${t.peakBacklog.rows} rows)`,
  );
}
