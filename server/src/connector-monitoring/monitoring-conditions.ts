import { problem, type ProblemDetail } from '../platform/http/problem-detail.js';

/**
 * The connector-monitoring conditions evaluated in rounds (all but `gateway-offline`, which the
 * gateways domain fires when one of the connector's gateways goes offline), pure: given a rule's parameters, its running state and
 * one observation of the connector, the new state and whether the condition holds now.
 *
 * Observations come from the evaluator every round: the connector's packet counters (cumulative,
 * as ConnectorTelemetry keeps them), its last packet time and its status. Counts "in the window"
 * are differences of counter samples, so no packet is read twice and nothing is stored per packet.
 *
 * Thresholds: `above` holds when the count is at least `threshold`, `below` when it is less
 * (`below` only once a whole window has been observed, else every fresh rule would fire at once).
 */

export const MONITOR_TYPES = [
  'packet-threshold',
  'failed-packet-threshold',
  'status-duration',
  'status-count',
  'status-change',
  'no-data',
  // Fires per gateway of the connector as it goes offline (gateways/gateway-status.ts), not by rounds.
  'gateway-offline',
] as const;
export type MonitorType = (typeof MONITOR_TYPES)[number];

/** What a connector is: `inactive` when deactivated; connection-keeping kinds (mqtt-in, the
 * embedded broker) are `connected`/`disconnected` while active; the others simply `active`. */
export const CONNECTOR_STATUSES = ['active', 'inactive', 'connected', 'disconnected'] as const;
export type ConnectorStatus = (typeof CONNECTOR_STATUSES)[number];

export interface MonitorParams {
  windowSeconds?: number;
  threshold?: number;
  comparison?: 'above' | 'below';
  status?: ConnectorStatus;
  durationSeconds?: number;
}

/** Running figures kept on the rule row (JSON); times are epoch ms. */
export interface MonitorState {
  /** Counter samples [time, packetsIn, packetsFailed], oldest first. */
  samples: Array<[number, number, number]>;
  status?: ConnectorStatus;
  statusSince?: number;
  /** Status changes [time, new status] inside the window. */
  transitions: Array<[number, ConnectorStatus]>;
  /** Since when the observed status matches a status-duration rule's status. */
  matchingSince?: number;
  /** The condition held at the last round: it fires again only after it stopped holding. */
  firing: boolean;
}

export interface Observation {
  now: number;
  packetsIn: number;
  packetsFailed: number;
  lastPacketAt: number | null;
  status: ConnectorStatus;
  /** Since when the rule watches (no-data counts from here when no packet ever came). */
  watchingSince: number;
}

export interface Verdict {
  state: MonitorState;
  holds: boolean;
  /** Human-readable reason, e.g. `12 packets in 300 s (threshold 10)`. */
  message: string;
  details: Record<string, unknown>;
}

/** `active` matches every status of an active connector; the others match themselves. */
export const statusMatches = (observed: ConnectorStatus, wanted: ConnectorStatus): boolean =>
  observed === wanted || (wanted === 'active' && observed !== 'inactive');

/** Which parameters each type needs; the evaluator and the API both use this. */
export function paramsProblem(type: MonitorType, p: MonitorParams): string | undefined {
  return paramsDetail(type, p)?.message;
}

/**
 * paramsProblem as a detail at `/params/<name>`: a missing (or emptied, null) parameter is
 * `required`, the others say the bound or type they break (problem-detail.ts).
 */
export function paramsDetail(type: MonitorType, p: MonitorParams): ProblemDetail | undefined {
  const needs: Record<MonitorType, Array<keyof MonitorParams>> = {
    'packet-threshold': ['windowSeconds', 'threshold'],
    'failed-packet-threshold': ['windowSeconds', 'threshold'],
    'status-duration': ['status', 'durationSeconds'],
    'status-count': ['status', 'windowSeconds', 'threshold'],
    'status-change': ['windowSeconds', 'threshold'],
    'no-data': ['windowSeconds'],
    'gateway-offline': [],
  };
  for (const key of needs[type]) {
    const path = `/params/${key}`;
    const value = p[key] as unknown;
    const message =
      key === 'status'
        ? `params.status must be one of ${CONNECTOR_STATUSES.join(', ')}`
        : key === 'threshold'
          ? 'params.threshold must be an integer >= 0'
          : `params.${key} must be a number > 0`;
    if (value === undefined || value === null) return problem(path, 'required', {}, message);
    if (key === 'status') {
      if (!CONNECTOR_STATUSES.includes(value as ConnectorStatus))
        return problem(path, 'enum', { allowedValues: CONNECTOR_STATUSES }, message);
    } else if (key === 'threshold') {
      if (typeof value !== 'number' || !Number.isInteger(value))
        return problem(path, 'type', { type: 'integer' }, message);
      if (value < 0) return problem(path, 'minimum', { limit: 0 }, message);
    } else if (typeof value !== 'number' || !Number.isFinite(value))
      return problem(path, 'type', { type: 'number' }, message);
    else if (value <= 0) return problem(path, 'exclusiveMinimum', { limit: 0 }, message);
  }
  return undefined;
}

/** Applies one observation: new state and whether the rule's condition holds. */
export function observe(type: MonitorType, p: MonitorParams, before: MonitorState, o: Observation): Verdict {
  const windowMs = (p.windowSeconds ?? 0) * 1000;
  const state: MonitorState = {
    samples: [...before.samples, [o.now, o.packetsIn, o.packetsFailed]],
    transitions: [...before.transitions],
    firing: before.firing,
    ...(before.matchingSince !== undefined ? { matchingSince: before.matchingSince } : {}),
    ...(before.status ? { status: before.status, statusSince: before.statusSince ?? o.now } : {}),
  };
  if (state.status !== o.status) {
    // The first observation is the baseline, not a change.
    if (state.status !== undefined) state.transitions.push([o.now, o.status]);
    state.status = o.status;
    state.statusSince = o.now;
  }
  pruneSamples(state, o.now - windowMs);
  state.transitions = state.transitions.filter(([t]) => t > o.now - windowMs);

  const count = (column: 1 | 2) => {
    const base = baseline(state.samples, o.now - windowMs);
    const latest = state.samples.at(-1)!;
    return { count: Math.max(0, latest[column] - base.sample[column]), complete: base.complete };
  };
  const seconds = p.windowSeconds ?? 0;
  switch (type) {
    case 'packet-threshold':
    case 'failed-packet-threshold': {
      const { count: n, complete } = count(type === 'packet-threshold' ? 1 : 2);
      const what = type === 'packet-threshold' ? 'packets' : 'failed packets';
      const below = p.comparison === 'below';
      const holds = below ? complete && n < p.threshold! : n >= p.threshold!;
      return verdict(
        state,
        holds,
        `${n} ${what} in ${seconds} s (${below ? 'fewer than' : 'at least'} ${p.threshold})`,
        {
          count: n,
          windowSeconds: seconds,
          threshold: p.threshold,
          comparison: below ? 'below' : 'above',
        },
      );
    }
    case 'status-duration': {
      const matching = statusMatches(o.status, p.status!);
      // `active` is one status here although connected/disconnected may alternate under it.
      if (matching) state.matchingSince = before.matchingSince ?? o.now;
      else delete state.matchingSince;
      const sinceMs = matching ? o.now - state.matchingSince! : 0;
      const holds = matching && sinceMs >= p.durationSeconds! * 1000;
      return verdict(
        state,
        holds,
        `${o.status} for ${Math.round(sinceMs / 1000)} s (limit ${p.durationSeconds} s)`,
        {
          status: o.status,
          forSeconds: Math.round(sinceMs / 1000),
          durationSeconds: p.durationSeconds,
        },
      );
    }
    case 'status-count': {
      const n = state.transitions.filter(([, s]) => statusMatches(s, p.status!)).length;
      return verdict(
        state,
        n >= p.threshold!,
        `${p.status} ${n} times in ${seconds} s (threshold ${p.threshold})`,
        {
          status: p.status,
          count: n,
          windowSeconds: seconds,
          threshold: p.threshold,
        },
      );
    }
    case 'status-change': {
      const n = state.transitions.length;
      return verdict(
        state,
        n >= p.threshold!,
        `${n} status changes in ${seconds} s (threshold ${p.threshold})`,
        {
          changes: n,
          statuses: state.transitions.map(([, s]) => s),
          windowSeconds: seconds,
          threshold: p.threshold,
        },
      );
    }
    case 'gateway-offline':
      // Edge-triggered by gateway status changes instead (ConnectorMonitoringEvaluator.gatewayWentOffline).
      return verdict(state, false, 'fires when a gateway of the connector goes offline', {});
    case 'no-data': {
      const since = o.lastPacketAt ?? o.watchingSince;
      const silentMs = o.now - since;
      return verdict(
        state,
        silentMs >= windowMs,
        o.lastPacketAt === null
          ? `no packet since monitoring started ${Math.round(silentMs / 1000)} s ago (limit ${seconds} s)`
          : `no packet for ${Math.round(silentMs / 1000)} s (limit ${seconds} s)`,
        {
          lastPacketAt: o.lastPacketAt === null ? null : new Date(o.lastPacketAt).toISOString(),
          windowSeconds: seconds,
        },
      );
    }
  }
}

function verdict(
  state: MonitorState,
  holds: boolean,
  message: string,
  details: Record<string, unknown>,
): Verdict {
  return { state, holds, message, details };
}

/** The sample the window counts from: the newest at or before its start, else the oldest (incomplete). */
function baseline(samples: MonitorState['samples'], start: number) {
  let found: [number, number, number] | undefined;
  for (const s of samples) if (s[0] <= start) found = s;
  return found ? { sample: found, complete: true } : { sample: samples[0]!, complete: false };
}

/** Keeps the samples inside the window plus the one just before it (the baseline). */
function pruneSamples(state: MonitorState, start: number): void {
  let keepFrom = 0;
  state.samples.forEach((s, i) => {
    if (s[0] <= start) keepFrom = i;
  });
  state.samples = state.samples.slice(keepFrom);
}
