import type { EntityManager } from '@mikro-orm/postgresql';
import type { StateValueSetter } from './state-value-setter.js';

/**
 * INTERIM, until the state engine (states/engine/) exists: writes `value` and `timestamp` straight
 * to the row, and only when the value differs (jsonb equality, so `1.0` equals `1` and key order
 * does not matter). No dependants recomputed, no time-series point, no live push; the lead
 * replaces this with the engine in services.ts.
 */
export class DirectStateValueSetter implements StateValueSetter {
  constructor(private readonly em: () => EntityManager) {}

  async setValue(stateId: string, value: unknown, time: Date): Promise<{ changed: boolean }> {
    // No value is SQL NULL, as the ORM stores it, not a jsonb `null`.
    const json = value === null || value === undefined ? null : JSON.stringify(value);
    const rows = await this.em()
      .getConnection()
      .execute<Array<{ id: string }>>(
        `UPDATE data_states SET value = ?::jsonb, "timestamp" = ?, updated_at = ?
          WHERE id = ? AND value IS DISTINCT FROM ?::jsonb RETURNING id`,
        [json, time, time, stateId, json],
      );
    return { changed: rows.length > 0 };
  }

  definitionsChanged(): void {}
}
