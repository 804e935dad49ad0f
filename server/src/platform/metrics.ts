import type { FastifyInstance, FastifyRequest } from 'fastify';
import client, { type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { errors } from './errors.js';
import { safeEqual, sha256 } from './crypto/tokens.js';

/** One metric family as prom-client hands it out (`getMetricsAsJSON`): what a worker thread posts. */
export type MetricFamily = MetricObjectWithValues<MetricValue<string>>;

/**
 * prom-client's default gauges that end in `_total`, which the exposition format keeps for counters
 * (promtool rejects them); the per-type gauges without the suffix carry the same numbers.
 */
const MISNAMED_DEFAULTS = [
  'stellwerk_nodejs_active_handles_total',
  'stellwerk_nodejs_active_requests_total',
  'stellwerk_nodejs_active_resources_total',
];

export interface MetricsEndpointOptions {
  /** When set, `/metrics` answers only `Authorization: Bearer <token>` (STELLWERK_METRICS_TOKEN). */
  token?: string | undefined;
}

/** One registry per server instance, so tests can run several in one process. */
export class Metrics {
  readonly registry = new client.Registry();
  /** Families kept elsewhere (the ingest worker thread's registry), merged into each scrape. */
  private readonly sources: Array<() => Promise<MetricFamily[]>> = [];

  /** `processMetrics` false: a worker thread's registry (the process metrics are the main thread's). */
  constructor(labels: Record<string, string> = {}, { processMetrics = true } = {}) {
    this.registry.setDefaultLabels(labels);
    if (processMetrics) {
      client.collectDefaultMetrics({ register: this.registry, prefix: 'stellwerk_' });
      for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    }
  }

  /** `collect` runs at each scrape (counts kept elsewhere are added then); it must not throw. */
  counter<L extends string>(
    name: string,
    help: string,
    labelNames: L[] = [],
    collect?: (counter: client.Counter<L>) => void,
  ): client.Counter<L> {
    return new client.Counter({ name, help, labelNames, registers: [this.registry], ...atScrape(collect) });
  }

  histogram<L extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: L[] = [],
  ): client.Histogram<L> {
    return new client.Histogram({ name, help, buckets, labelNames, registers: [this.registry] });
  }

  /** `collect` runs at each scrape; it must not throw, or the whole scrape fails. */
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames: L[] = [],
    collect?: (gauge: client.Gauge<L>) => Promise<void> | void,
  ): client.Gauge<L> {
    return new client.Gauge({ name, help, labelNames, registers: [this.registry], ...atScrape(collect) });
  }

  /** Adds another registry's families to every scrape; `source` must not throw. */
  addSource(source: () => Promise<MetricFamily[]>): void {
    this.sources.push(source);
  }

  /** This registry's families with the default labels applied (a worker thread posts these). */
  families(): Promise<MetricFamily[]> {
    return this.registry.getMetricsAsJSON();
  }

  /**
   * The text exposition of this registry and every source. A family that several registries hold
   * (a pool gauge in both threads) is written once, with one HELP and TYPE line and all their series.
   */
  async exposition(): Promise<string> {
    const parts = await Promise.all([this.families(), ...this.sources.map((source) => source())]);
    const merged = new client.Registry();
    for (const family of mergeFamilies(parts.flat())) {
      merged.registerMetric({ ...family, get: () => Promise.resolve(family) } as unknown as client.Metric);
    }
    return merged.metrics();
  }

  register(app: FastifyInstance, options: MetricsEndpointOptions = {}): void {
    const httpDuration = this.histogram(
      'stellwerk_http_request_duration_seconds',
      'HTTP request latency by route template',
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      ['method', 'route', 'status'],
    );
    app.addHook('onResponse', async (request, reply) => {
      // Label by route template, never the raw URL: ids would explode the series count.
      const route = request.routeOptions.url ?? 'unmatched';
      httpDuration.observe(
        { method: request.method, route, status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });
    const { token } = options;
    app.get(
      '/metrics',
      {
        config: { auth: 'public' },
        schema: { hide: true },
        ...(token ? { onRequest: async (request: FastifyRequest) => checkBearer(request, token) } : {}),
      },
      async (_request, reply) => {
        reply.header('content-type', this.registry.contentType);
        return this.exposition();
      },
    );
  }
}

/** prom-client calls a metric's `collect` with the metric as `this`; ours take it as their argument. */
function atScrape<M>(collect: ((metric: M) => Promise<void> | void) | undefined) {
  return collect
    ? {
        async collect(this: M) {
          await collect(this);
        },
      }
    : {};
}

/** The scrape's bearer token, compared in constant time (digests: equal lengths); else 401. */
function checkBearer(request: FastifyRequest, token: string): void {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (match && safeEqual(sha256(match[1]!), sha256(token))) return;
  const error = errors.invalidToken('GET /metrics needs Authorization: Bearer <STELLWERK_METRICS_TOKEN>');
  Object.assign(error.headers, { 'www-authenticate': 'Bearer realm="metrics"' });
  throw error;
}

/**
 * Families by name, in first-seen order; series of the same family and labels from several
 * registries are summed (counters, histogram buckets and pool gauges all add up).
 */
export function mergeFamilies(families: MetricFamily[]): MetricFamily[] {
  const byName = new Map<string, { family: MetricFamily; series: Map<string, MetricValue<string>> }>();
  for (const family of families) {
    let entry = byName.get(family.name);
    if (!entry) {
      entry = { family: { ...family, values: [] }, series: new Map() };
      byName.set(family.name, entry);
    }
    for (const value of family.values) {
      const name = (value as { metricName?: string }).metricName ?? family.name;
      const key = `${name}${JSON.stringify(Object.entries(value.labels).sort(([a], [b]) => a.localeCompare(b)))}`;
      const seen = entry.series.get(key);
      if (seen) seen.value += value.value;
      else {
        const copy = { ...value, labels: { ...value.labels } };
        entry.series.set(key, copy);
        entry.family.values.push(copy);
      }
    }
  }
  return [...byName.values()].map((entry) => entry.family);
}
