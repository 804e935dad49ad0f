import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import type pg from 'pg';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TimeSeriesPoint } from '../../../server/src/timeseries/timeseries.types.js';
import { expectStatus } from './identity.js';
import type { TestApp } from './test-app.js';
import { TimeSeriesFixtures } from './timeseries-fixtures.js';

/**
 * A seeded account for export tests: a Berlin pump across the autumn DST change (25 October 2026)
 * and a New York pump across the October month end (and its own DST change on 1 November).
 * Points go to PostgreSQL (`ts_points`) or, when `write` is given, to another target.
 */
export const BERLIN_DST = Date.parse('2026-10-25T01:00:00Z');
export const NEW_YORK_DST = Date.parse('2026-11-01T06:00:00Z');
const HOUR = 3_600_000;

export interface ExportWorld {
  ids: Record<string, string>;
  berlinFlow: Array<{ time: number; value: number }>;
  berlinStatus: Array<{ time: number; text: string }>;
  nyFlow: Array<{ time: number; value: number }>;
}

export async function seedExportWorld(
  pool: pg.Pool,
  accountId: string,
  write?: (points: TimeSeriesPoint[]) => Promise<void>,
): Promise<ExportWorld> {
  const fx = new TimeSeriesFixtures(pool);
  const berlin = await fx.twin('Werk Berlin', accountId, null, { city: 'Berlin' }, ['berlin', 'site']);
  const b1 = await fx.twin('Pumpe B1', accountId, berlin, { city: 'Berlin', costCentre: '=1+2' }, ['pump']);
  const ny = await fx.twin('Plant NY', accountId, null, { city: 'New York' }, ['ny', 'site']);
  const n1 = await fx.twin('Pump N1', accountId, ny, { city: 'New York' }, ['pump']);
  await fx.sql(
    `UPDATE digital_twins SET address = $2::jsonb, latitude = 52.52, longitude = 13.405 WHERE id = $1`,
    [
      b1,
      JSON.stringify({ street: 'Hauptstraße 1; Hof', postalCode: '10115', city: 'Berlin', country: 'DE' }),
    ],
  );
  const ids: Record<string, string> = { ...fx.ids, berlin, b1, ny, n1 };
  const bFlow = await fx.state('bFlow', accountId, b1, 'flow', 'm³/h');
  const bStatus = await fx.state('bStatus', accountId, b1, 'status');
  const nFlow = await fx.state('nFlow', accountId, n1, 'flow', 'm³/h');
  Object.assign(ids, { bFlow, bStatus, nFlow });
  const start = Date.parse('2026-10-24T20:00:00Z');
  const berlinFlow = Array.from({ length: 60 }, (_v, i) => ({
    time: start + (i * HOUR) / 2,
    value: i * 0.25 - 3,
  }));
  const berlinStatus = [
    { time: Date.parse('2026-10-25T00:30:00Z'), text: '=HYPERLINK("http://evil.test")' },
    { time: Date.parse('2026-10-25T01:30:00Z'), text: '-5' },
  ];
  const nyStart = Date.parse('2026-10-31T00:00:00Z');
  const nyFlow = Array.from({ length: 37 }, (_v, i) => ({ time: nyStart + i * HOUR, value: 100 + i }));
  if (!write) {
    await fx.points(bFlow, berlinFlow);
    await fx.points(bStatus, berlinStatus);
    await fx.points(nFlow, nyFlow);
  } else {
    const point =
      (stateId: string, twinId: string, key: string) =>
      (p: { time: number; value?: number; text?: string }) => ({
        accountId,
        twinId,
        stateId,
        stateKey: key,
        time: new Date(p.time),
        value: p.value ?? null,
        text: p.text ?? null,
      });
    await write([
      ...berlinFlow.map(point(bFlow, b1, 'flow')),
      ...berlinStatus.map(point(bStatus, b1, 'status')),
      ...nyFlow.map(point(nFlow, n1, 'flow')),
    ]);
  }
  return { ids, berlinFlow, berlinStatus, nyFlow };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Wall-clock time with offset, from the known DST dates (independent of the server's formatter). */
export function wallClock(ms: number, zone: 'Europe/Berlin' | 'America/New_York'): string {
  const hours = zone === 'Europe/Berlin' ? (ms < BERLIN_DST ? 2 : 1) : ms < NEW_YORK_DST ? -4 : -5;
  const d = new Date(ms + hours * HOUR);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  return `${date}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:00${hours < 0 ? '-' : '+'}${pad(Math.abs(hours))}:00`;
}

/** Runs a plan to its end (the runner drained here) and returns the finished job. */
export async function runPlan(
  t: TestApp,
  call: (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<LightMyRequestResponse>,
  planId: string,
): Promise<{
  id: string;
  status: string;
  total: number;
  progress: number;
  errors: Array<{ message: string }>;
  result: Record<string, unknown>;
}> {
  const job = expectStatus<{ id: string; status: string }>(
    await call('POST', `/xapi/v1/export-plans/${planId}/run`),
    202,
  );
  expect(job.status).toBe('queued');
  await t.services.jobs.runner.runOnce();
  return expectStatus(await call('GET', `/xapi/v1/jobs/${job.id}`), 200);
}

/** The job's file parsed back with csv-parse (gunzipped when it is compressed). */
export async function downloadRows(
  call: (method: 'GET', url: string) => Promise<LightMyRequestResponse>,
  jobId: string,
  options: { delimiter?: string; gzip?: boolean } = {},
): Promise<string[][]> {
  const response = await call('GET', `/xapi/v1/jobs/${jobId}/file`);
  expect(response.statusCode, response.body).toBe(200);
  const raw = options.gzip ? gunzipSync(response.rawPayload) : response.rawPayload;
  return parse(raw, {
    delimiter: options.delimiter ?? ',',
    bom: true,
    relax_column_count: false,
  });
}
