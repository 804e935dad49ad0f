import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { markLateHours } from '../../../server/src/timeseries/rollups.js';

export interface PointRowInput {
  time: number;
  value?: number | null;
  text?: string | null;
}

/**
 * Twins, states and points written straight with SQL, so time-series tests do not depend on the
 * twins API or the writer. Every created twin and state is remembered in `ids` under its name.
 */
export class TimeSeriesFixtures {
  readonly ids: Record<string, string> = {};

  constructor(private readonly pool: pg.Pool) {}

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows of ad-hoc test SQL
  sql(text: string, params: unknown[] = []): Promise<pg.QueryResult<Record<string, any>>> {
    return this.pool.query(text, params);
  }

  async twin(name: string, accountId: string, parent: string | null, props = {}, tags: string[] = []) {
    const id = randomUUID();
    const parentPath = parent
      ? ((await this.sql('SELECT path FROM digital_twins WHERE id = $1', [parent])).rows[0]!.path as string[])
      : [];
    await this.sql(
      `INSERT INTO digital_twins (id, account_id, parent_id, path, title, custom_properties, tags, reference_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4::uuid[], $5, $6::jsonb, $7::text[], $8, now(), now())`,
      [id, accountId, parent, [...parentPath, id], name, JSON.stringify(props), tags, `ref-${name}`],
    );
    this.ids[name] = id;
    return id;
  }

  async state(name: string, accountId: string, twinId: string, key: string, unit: string | null = null) {
    const id = randomUUID();
    await this.sql(
      `INSERT INTO data_states (id, account_id, twin_id, key, title, unit, meta, engine, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, '{}', '{}', now(), now())`,
      [id, accountId, twinId, key, `${key} title`, unit],
    );
    this.ids[name] = id;
    return id;
  }

  /** Points as the write path stores them: late ones (older than an hour before `now`) mark their hours. */
  async points(stateId: string, rows: PointRowInput[], now = Date.now()): Promise<void> {
    await this.sql(
      'INSERT INTO ts_points (state_id, time, value, text) ' +
        'SELECT $1, * FROM unnest($2::timestamptz[], $3::float8[], $4::text[])',
      [
        stateId,
        rows.map((r) => new Date(r.time).toISOString()),
        rows.map((r) => r.value ?? null),
        rows.map((r) => r.text ?? null),
      ],
    );
    await markLateHours(
      this.pool,
      rows.map((r) => ({ stateId, time: new Date(r.time) })),
      now,
    );
  }
}
