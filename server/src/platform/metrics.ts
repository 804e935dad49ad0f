import client from 'prom-client';
import type { FastifyInstance } from 'fastify';

/** One registry per server instance, so tests can run several in one process. */
export class Metrics {
  readonly registry = new client.Registry();
  readonly httpDuration: client.Histogram<'method' | 'route' | 'status'>;
  /** Metrics kept elsewhere (the ingest worker's registry), in exposition format, appended at each scrape. */
  private readonly sources: Array<() => Promise<string>> = [];

  /** `processMetrics` false: a worker thread's registry (the process metrics are the main thread's). */
  constructor(labels: Record<string, string> = {}, { processMetrics = true } = {}) {
    this.registry.setDefaultLabels(labels);
    if (processMetrics) client.collectDefaultMetrics({ register: this.registry, prefix: 'stellwerk_' });
    this.httpDuration = new client.Histogram({
      name: 'stellwerk_http_request_duration_seconds',
      help: 'HTTP request latency by route template',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
  }

  counter<L extends string>(name: string, help: string, labelNames: L[] = []): client.Counter<L> {
    return new client.Counter({ name, help, labelNames, registers: [this.registry] });
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
    return new client.Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect
        ? {
            async collect(this: client.Gauge<L>) {
              await collect(this);
            },
          }
        : {}),
    });
  }

  /** Adds metrics of another registry to every scrape; `source` must not throw. */
  addSource(source: () => Promise<string>): void {
    this.sources.push(source);
  }

  register(app: FastifyInstance): void {
    app.addHook('onResponse', async (request, reply) => {
      // Label by route template, never the raw URL: ids would explode the series count.
      const route = request.routeOptions.url ?? 'unmatched';
      this.httpDuration.observe(
        { method: request.method, route, status: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });
    app.get('/metrics', { config: { auth: 'public' }, schema: { hide: true } }, async (_request, reply) => {
      reply.header('content-type', this.registry.contentType);
      const parts = await Promise.all([this.registry.metrics(), ...this.sources.map((source) => source())]);
      return parts.filter((part) => part.length > 0).join('\n');
    });
  }
}
