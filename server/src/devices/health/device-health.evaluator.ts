import type { AlarmSeverity } from '../../alarms/alarm-log.entity.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { AlarmInput } from '../../alarms/alarm-log.service.js';
import type { HealthConfig } from '../../drivers/device-driver.entity.js';
import type { Schedule } from '../../platform/schedule.js';
import { HEALTH_UNKNOWN } from '../virtual-device.entity.js';
import {
  evaluateHealth,
  HEALTH_HEALTHY,
  healthMode,
  nextHealthCheck,
  ruleStateKeys,
  type HealthMode,
  type HealthVerdict,
} from './health-evaluation.js';

/**
 * Evaluates device health against the database (docs/device-health.md): loads the devices, their
 * effective rules (own, else the driver's) and the states those rules read, stores the verdict and
 * the next check, and writes an alarm log entry on a change when the configuration asks for it.
 *
 * Used by the scheduler (`runDue`, one node through the leader timer, bounded batches), by the
 * queue that evaluates devices promptly after their first packet, and by the on-demand route.
 * A verdict is written with the previous state read under a row lock, so two evaluators racing
 * on one device write one change (and one alarm), never two.
 */

export const HEALTH_ALARM_CATEGORY = 'Gerätezustand';
/** Devices evaluated per statement batch. */
export const HEALTH_BATCH = 200;

/** The alarm severity of a health state (the default rules' states; a state of one's own is a warning). */
export function healthSeverity(state: string): AlarmSeverity {
  switch (state) {
    case 'Critical':
    case 'Error':
      return 'critical';
    case 'Alarm':
      return 'major';
    case 'Silent':
      return 'minor';
    case 'Healthy':
    case 'Unknown':
      return 'info';
    default:
      return 'warning';
  }
}
/** Batches per scheduler round: bounds a round after a long outage (the rest follow next round). */
const MAX_BATCHES_PER_ROUND = 10;
/** Devices placed in their slot per round (new devices, or all devices after the upgrade). */
const PLACE_PER_ROUND = 2000;

export interface HealthAlarmWriter {
  write(input: AlarmInput): Promise<unknown>;
  clear(
    accountId: string,
    source: { kind: string; id: string },
    reference: { type: string; id: string } | null,
  ): Promise<unknown>;
}

/** A device's verdict, computed and not yet stored. */
interface PlannedVerdict {
  row: DeviceHealthRow;
  config: HealthConfig | null;
  verdict: HealthVerdict;
  next: Date;
}

/** What storing a verdict answered: the state it replaced, and the next check as stored. */
interface StoredVerdict {
  previous: string;
  next_check_at: Date | string;
}

interface DeviceHealthRow {
  id: string;
  account_id: string;
  title: string;
  own_config: HealthConfig | null;
  driver_config: HealthConfig | null;
  health_schedule: Schedule | null;
  health_schedule_anchor: Date | string | null;
  last_seen: Date | string | null;
  time_zone: string;
}

export interface HealthOutcome extends HealthVerdict {
  deviceId: string;
  previous: string;
  mode: HealthMode;
  nextCheckAt: Date;
}

const asDate = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

const timing = (r: DeviceHealthRow) => ({
  deviceId: r.id,
  ownConfig: r.own_config,
  schedule: r.health_schedule,
  anchor: asDate(r.health_schedule_anchor),
  timeZone: r.time_zone,
});

export class DeviceHealthEvaluator {
  constructor(
    private readonly deps: {
      orm: MikroORM;
      alarms: HealthAlarmWriter;
      log: FastifyBaseLogger;
    },
  ) {}

  private sql<T>(query: string, params: unknown[]): Promise<T[]> {
    return this.deps.orm.em.fork().getConnection().execute<T[]>(query, params);
  }

  /**
   * Evaluates the devices at `now` and stores the verdicts. `reschedule`: the evaluation was the
   * scheduled one, so the next check moves on; otherwise (prompt or on demand) the schedule stays
   * (a device not yet placed in its slot is placed).
   */
  async evaluate(ids: readonly string[], now: Date, reschedule: boolean): Promise<HealthOutcome[]> {
    const outcomes: HealthOutcome[] = [];
    for (let i = 0; i < ids.length; i += HEALTH_BATCH) {
      outcomes.push(...(await this.evaluateBatch(ids.slice(i, i + HEALTH_BATCH), now, reschedule)));
    }
    return outcomes;
  }

  private async evaluateBatch(ids: string[], now: Date, reschedule: boolean): Promise<HealthOutcome[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql<DeviceHealthRow>(
      `SELECT d.id, d.account_id, d.title, d.health_config AS own_config, dr.health_config AS driver_config,
              d.health_schedule, d.health_schedule_anchor, d.last_seen, a.time_zone
         FROM virtual_devices d
         JOIN accounts a ON a.id = d.account_id
         LEFT JOIN device_drivers dr ON dr.id = d.driver_id
        WHERE d.id IN (?)`,
      [ids],
    );
    const keys = [...new Set(rows.flatMap((r) => ruleStateKeys(r.own_config ?? r.driver_config)))];
    const states = new Map<string, Record<string, unknown>>();
    if (keys.length > 0) {
      const stateRows = await this.sql<{ device_id: string; key: string; value: unknown }>(
        'SELECT device_id, key, value FROM device_states WHERE device_id IN (?) AND key IN (?)',
        [rows.map((r) => r.id), keys],
      );
      for (const s of stateRows) {
        const of = states.get(s.device_id) ?? {};
        of[s.key] = s.value;
        states.set(s.device_id, of);
      }
    }
    const planned: PlannedVerdict[] = [];
    for (const row of rows) {
      try {
        const config = row.own_config ?? row.driver_config;
        const verdict = evaluateHealth(config, states.get(row.id) ?? {}, asDate(row.last_seen), now);
        planned.push({ row, config, verdict, next: nextHealthCheck(timing(row), now) });
      } catch (error) {
        this.deps.log.warn({ err: error, deviceId: row.id }, 'device health: evaluation failed');
      }
    }
    const stored = await this.storeAll(planned, now, reschedule).catch((error: unknown) => {
      this.deps.log.warn({ err: error }, 'device health: storing a batch failed; storing one by one');
      return new Map<string, StoredVerdict>();
    });
    const outcomes: HealthOutcome[] = [];
    for (const plan of planned) {
      try {
        // Not in the batch's answer: its row was locked by another writer (the ingest's lastSeen
        // update), or the device is gone. Stored alone, waiting for the lock.
        const updated = stored.has(plan.row.id)
          ? stored.get(plan.row.id)
          : await this.storeOne(plan, now, reschedule);
        outcomes.push(await this.outcome(plan, updated));
      } catch (error) {
        this.deps.log.warn({ err: error, deviceId: plan.row.id }, 'device health: evaluation failed');
      }
    }
    return outcomes;
  }

  /**
   * Verdicts in one statement, each with the state it replaces, read under the row lock.
   * `skipLocked`: rows another transaction holds are skipped, never waited for. The ingest updates
   * lastSeen of many devices in one transaction, in no fixed order, so waiting for a set of row locks
   * could deadlock with it; a single row (one lock) may wait.
   */
  private async storeAll(
    planned: PlannedVerdict[],
    now: Date,
    reschedule: boolean,
    skipLocked = true,
  ): Promise<Map<string, StoredVerdict>> {
    if (planned.length === 0) return new Map();
    const verdicts = planned.map(({ row, verdict, next }) => ({
      id: row.id,
      state: verdict.state,
      reason: verdict.reason.slice(0, 300),
      next: next.toISOString(),
    }));
    const rows = await this.sql<StoredVerdict & { id: string }>(
      `WITH v AS MATERIALIZED (
              SELECT * FROM jsonb_to_recordset(?::jsonb) AS v(id uuid, state text, reason text, next timestamptz)),
            p AS MATERIALIZED (
              SELECT d.id, d.health_state AS previous FROM virtual_devices d
               WHERE d.id IN (SELECT id FROM v) ORDER BY d.id FOR UPDATE${skipLocked ? ' SKIP LOCKED' : ''})
       UPDATE virtual_devices d
          SET health_state = v.state, health_reason = v.reason, health_checked_at = ?,
              health_next_check_at = ${reschedule ? 'v.next' : 'COALESCE(d.health_next_check_at, v.next)'}
         FROM p JOIN v ON v.id = p.id
        WHERE d.id = p.id
        RETURNING d.id, p.previous, d.health_next_check_at AS next_check_at`,
      [JSON.stringify(verdicts), now],
    );
    return new Map(rows.map(({ id, ...stored }) => [id, stored]));
  }

  /** One verdict, waiting for its row's lock. */
  private async storeOne(
    plan: PlannedVerdict,
    now: Date,
    reschedule: boolean,
  ): Promise<StoredVerdict | undefined> {
    return (await this.storeAll([plan], now, reschedule, false)).get(plan.row.id);
  }

  /** The outcome of a stored verdict, and its alarm entry when the change is news. */
  private async outcome(plan: PlannedVerdict, updated: StoredVerdict | undefined): Promise<HealthOutcome> {
    const { row, config, verdict, next } = plan;
    const previous = updated?.previous ?? HEALTH_UNKNOWN;
    const outcome: HealthOutcome = {
      deviceId: row.id,
      ...verdict,
      previous,
      mode: healthMode(timing(row)),
      nextCheckAt: updated ? new Date(updated.next_check_at) : next,
    };
    // A first verdict of Healthy is no news; every other change is (including recovery).
    const noteworthy =
      updated &&
      previous !== verdict.state &&
      !(previous === HEALTH_UNKNOWN && verdict.state === HEALTH_HEALTHY);
    if (noteworthy && config?.alarmOnChange) await this.alarm(row, outcome);
    return outcome;
  }

  private async alarm(row: DeviceHealthRow, outcome: HealthOutcome): Promise<void> {
    try {
      await this.deps.alarms.write({
        accountId: row.account_id,
        category: HEALTH_ALARM_CATEGORY,
        message: `Device "${row.title}": health ${outcome.previous} → ${outcome.state} (${outcome.reason})`,
        reference: { type: 'virtualDevice', id: row.id },
        source: { kind: 'deviceHealth', id: row.id },
        severity: healthSeverity(outcome.state),
        details: {
          previous: outcome.previous,
          current: outcome.state,
          reason: outcome.reason,
          mode: outcome.mode,
        },
      });
      // Back to Healthy: the recovery is the entry's last occurrence, and it closes the entry.
      if (outcome.state === HEALTH_HEALTHY)
        await this.deps.alarms.clear(
          row.account_id,
          { kind: 'deviceHealth', id: row.id },
          { type: 'virtualDevice', id: row.id },
        );
    } catch (error) {
      // The verdict stays stored: a lost alarm entry must not undo or repeat the evaluation.
      this.deps.log.warn({ err: error, deviceId: row.id }, 'device health: alarm entry failed');
    }
  }

  /**
   * One scheduler round at `now`: devices not yet placed get their next check (their slot, or
   * their own schedule) without being evaluated; devices whose check has come are evaluated, in
   * batches, at most MAX_BATCHES_PER_ROUND of them (the rest are still due next round).
   */
  async runDue(now: Date): Promise<{ placed: number; evaluated: string[] }> {
    const placed = await this.placeUnscheduled(now);
    const evaluated: string[] = [];
    for (let round = 0; round < MAX_BATCHES_PER_ROUND; round++) {
      const due = await this.sql<{ id: string }>(
        `SELECT id FROM virtual_devices WHERE health_next_check_at <= ?
          ORDER BY health_next_check_at LIMIT ${HEALTH_BATCH}`,
        [now],
      );
      if (due.length === 0) break;
      const outcomes = await this.evaluateBatch(
        due.map((d) => d.id),
        now,
        true,
      );
      evaluated.push(...outcomes.map((o) => o.deviceId));
      // A device that failed keeps its due time: stop rather than pick it up again this round.
      if (due.length < HEALTH_BATCH || outcomes.length < due.length) break;
    }
    return { placed, evaluated };
  }

  private async placeUnscheduled(now: Date): Promise<number> {
    const rows = await this.sql<DeviceHealthRow>(
      `SELECT d.id, d.health_config AS own_config, d.health_schedule, d.health_schedule_anchor, a.time_zone
         FROM virtual_devices d JOIN accounts a ON a.id = d.account_id
        WHERE d.health_next_check_at IS NULL LIMIT ${PLACE_PER_ROUND}`,
      [],
    );
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      const values = chunk.map(() => '(?::uuid, ?::timestamptz)').join(', ');
      await this.sql(
        `UPDATE virtual_devices d SET health_next_check_at = v.next
           FROM (VALUES ${values}) AS v(id, next)
          WHERE d.id = v.id AND d.health_next_check_at IS NULL`,
        chunk.flatMap((r) => [r.id, nextHealthCheck(timing(r), now)]),
      );
    }
    return rows.length;
  }
}
