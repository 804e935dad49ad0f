import { setImmediate as nextTurn } from 'node:timers/promises';
import type { CsvValue } from '../platform/csv/csv-writer.js';
import { AppError } from '../platform/errors.js';
import { nextPeriodStart, periodStart } from '../states/engine/calendar.js';
import type { TimeSeriesQueryResult } from '../timeseries/query/query.service.js';
import type { PointFilter, TimeSeriesPoint } from '../timeseries/timeseries.types.js';
import { clusterKeys, timeCell } from './export-columns.js';
import type { ExportDefinition } from './export-plan.types.js';

/**
 * The export engine: the rows of an export, in batches, oldest first, ordered by time, then subject
 * (twins in hierarchy order, devices by title), then state. Memory stays bounded whatever the range holds:
 * - raw points are read window by window through the serving time-series target (`readPoints`,
 *   so every target works), each window sized to hold about WINDOW_TARGET points and halved and
 *   read again when it reaches WINDOW_LIMIT;
 * - averages are asked of the time-series query engine, per group of at most 1000 states and per
 *   stretch of whole buckets that answers at most QUERY_ROWS rows.
 * A failure of the target (down, query refused) ends the export with that error: a job never
 * claims success for a partial file.
 */

/** A twin or device of the export: its id and the cells that precede the values in its rows. */
export interface ExportSubjectRow {
  id: string;
  cells: CsvValue[];
}

/** A series of the export: the data state whose points are read, whose subject it is, its key. */
export interface ExportState {
  id: string;
  subjectId: string;
  key: string;
  unit: string | null;
}

export interface ExportSource {
  subjects: ExportSubjectRow[];
  states: ExportState[];
}

export interface ExportReads {
  readPoints(filter: PointFilter): Promise<TimeSeriesPoint[]>;
  /** Runs a query of the time-series language within the plan's account and scopes. */
  query(text: string): Promise<TimeSeriesQueryResult>;
}

const WINDOW_TARGET = 20_000;
const WINDOW_LIMIT = 200_000;
const MIN_WINDOW_MS = 1000;
const MAX_WINDOW_MS = 366 * 86_400_000;
const STATES_PER_READ = 1000;
const QUERY_ROWS = 100_000;

const PERIOD_MS = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 } as const;

/** Rows of the export in [from, to), in batches of at most a few thousand. */
export async function* exportRows(
  def: ExportDefinition,
  source: ExportSource,
  reads: ExportReads,
  range: { from: Date; to: Date },
): AsyncGenerator<CsvValue[][]> {
  if (source.states.length === 0 || range.from >= range.to) return;
  const shaper = new Shaper(def, source);
  const batches = def.shape.average
    ? averagePoints(def, source, reads, range)
    : rawPoints(source, reads, range);
  for await (const points of batches) {
    const rows = shaper.rows(points);
    if (rows.length > 0) yield rows;
  }
}

/** An estimate of the rows an export writes (progress), from the points of the range when cheap. */
export function estimateAverageRows(
  def: ExportDefinition,
  source: ExportSource,
  range: { from: Date; to: Date },
) {
  const buckets = Math.ceil(
    (range.to.getTime() - range.from.getTime()) / PERIOD_MS[def.shape.average ?? 'hour'],
  );
  const perBucket = def.shape.layout === 'points' ? source.states.length : source.subjects.length;
  return Math.max(0, buckets * perBucket);
}

/** A point reduced to what shaping needs: whose, when and which value. */
interface Cell {
  stateId: string;
  time: number;
  value: number | string | null;
}

/** Raw points, window by window; every batch holds whole instants and is sorted. */
async function* rawPoints(
  source: ExportSource,
  reads: ExportReads,
  range: { from: Date; to: Date },
): AsyncGenerator<Cell[]> {
  const stateIds = source.states.map((s) => s.id);
  const end = range.to.getTime();
  let from = range.from.getTime();
  let width = 3_600_000;
  while (from < end) {
    const to = Math.min(end, from + width);
    const points: TimeSeriesPoint[] = [];
    for (let i = 0; i < stateIds.length; i += STATES_PER_READ) {
      const read = await reads.readPoints({
        stateIds: stateIds.slice(i, i + STATES_PER_READ),
        from: new Date(from),
        to: new Date(to),
        limit: WINDOW_LIMIT,
      });
      for (const p of read) points.push(p);
      if (points.length >= WINDOW_LIMIT) break;
    }
    if (points.length >= WINDOW_LIMIT) {
      // A window read only in part would lose points: read a narrower one, never write a gap.
      if (width <= MIN_WINDOW_MS)
        throw new AppError('EXPORT_TOO_DENSE', 422, `More than ${WINDOW_LIMIT} points within one second`);
      width = Math.max(MIN_WINDOW_MS, Math.floor(width / 2));
      continue;
    }
    yield points.map((p) => ({ stateId: p.stateId, time: p.time.getTime(), value: p.value ?? p.text }));
    from = to;
    const factor = Math.min(4, Math.max(0.5, WINDOW_TARGET / Math.max(points.length, 1)));
    width = Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, Math.floor(width * factor)));
    // A window of tiny pieces of work still gives the event loop a turn (MQTT acknowledgements).
    await nextTurn();
  }
}

const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * Means per hour (UTC hours: real hours, so the repeated hour of a DST change is two rows), day or
 * ISO week (on the wall clock of the plan's zone), through the query language.
 */
async function* averagePoints(
  def: ExportDefinition,
  source: ExportSource,
  reads: ExportReads,
  range: { from: Date; to: Date },
): AsyncGenerator<Cell[]> {
  const period = def.shape.average!;
  const bucket =
    period === 'hour' ? 'bucket(1h)' : `bucket(${period === 'day' ? '1d' : '1w'}, ${quoted(def.timeZone)})`;
  const stateIds = source.states.map((s) => s.id);
  const groups: string[][] = [];
  for (let i = 0; i < stateIds.length; i += STATES_PER_READ)
    groups.push(stateIds.slice(i, i + STATES_PER_READ));
  const bucketsPerQuery = Math.max(1, Math.floor(QUERY_ROWS / Math.min(STATES_PER_READ, stateIds.length)));
  const zone = period === 'hour' ? 'UTC' : def.timeZone;
  const end = range.to.getTime();
  let from = range.from.getTime();
  while (from < end) {
    let to = periodStart(period, from + bucketsPerQuery * PERIOD_MS[period], zone);
    if (to <= from) to = nextPeriodStart(period, from, zone);
    to = Math.min(end, to);
    const cells: Cell[] = [];
    for (const group of groups) {
      const result = await reads.query(
        `SELECT ${bucket} AS b, state.id AS s, mean(value) AS v ` +
          `WHERE state.id IN (${group.map(quoted).join(', ')}) ` +
          `AND time >= ${quoted(new Date(from).toISOString())} AND time < ${quoted(new Date(to).toISOString())} ` +
          `GROUP BY b, s ORDER BY b, s LIMIT ${QUERY_ROWS}`,
      );
      for (const [b, s, v] of result.rows)
        cells.push({
          stateId: String(s),
          time: Date.parse(String(b)),
          value: typeof v === 'number' ? v : null,
        });
    }
    yield cells;
    from = to;
  }
}

/** Turns sorted point cells into CSV rows of the plan's layout. */
class Shaper {
  private readonly subjectIndex = new Map<string, number>();
  private readonly states = new Map<string, { state: ExportState; subject: number; order: number }>();
  private readonly subjectPrefix: CsvValue[][];
  private readonly keys: string[];
  private readonly keyIndex: Map<string, number>;
  private readonly timeText: (ms: number, zone: string) => string;

  constructor(
    private readonly def: ExportDefinition,
    source: ExportSource,
  ) {
    source.subjects.forEach((t, i) => this.subjectIndex.set(t.id, i));
    this.subjectPrefix = source.subjects.map((t) => t.cells);
    this.keys = clusterKeys(def, source.states);
    this.keyIndex = new Map(this.keys.map((k, i) => [k, i]));
    this.timeText = timeCell(def.format);
    const keyOrder = def.selection.states.length > 0 ? this.keyIndex : null;
    const sorted = [...source.states].sort((a, b) =>
      keyOrder ? keyOrder.get(a.key)! - keyOrder.get(b.key)! : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    );
    sorted.forEach((state, order) =>
      this.states.set(state.id, { state, subject: this.subjectIndex.get(state.subjectId) ?? 0, order }),
    );
  }

  rows(cells: Cell[]): CsvValue[][] {
    const known = cells.filter((c) => this.states.has(c.stateId));
    known.sort((a, b) => {
      if (a.time !== b.time) return a.time - b.time;
      const sa = this.states.get(a.stateId)!;
      const sb = this.states.get(b.stateId)!;
      return sa.subject - sb.subject || sa.order - sb.order;
    });
    return this.def.shape.layout === 'points' ? this.pointRows(known) : this.clusterRows(known);
  }

  private pointRows(cells: Cell[]): CsvValue[][] {
    return cells.map((c) => {
      const { state, subject } = this.states.get(c.stateId)!;
      return [
        this.timeText(c.time, this.def.timeZone),
        ...this.subjectPrefix[subject]!,
        state.key,
        state.unit,
        c.value,
      ];
    });
  }

  /** One row per subject and instant (a packet's values share its time), a column per state key. */
  private clusterRows(cells: Cell[]): CsvValue[][] {
    const rows: CsvValue[][] = [];
    let current: { time: number; subject: number; values: CsvValue[] } | null = null;
    const flush = () => {
      if (current)
        rows.push([
          this.timeText(current.time, this.def.timeZone),
          ...this.subjectPrefix[current.subject]!,
          ...current.values,
        ]);
    };
    for (const c of cells) {
      const { state, subject } = this.states.get(c.stateId)!;
      if (!current || current.time !== c.time || current.subject !== subject) {
        flush();
        current = { time: c.time, subject, values: new Array<CsvValue>(this.keys.length).fill(null) };
      }
      current.values[this.keyIndex.get(state.key)!] = c.value;
    }
    flush();
    return rows;
  }
}
