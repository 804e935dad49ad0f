import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../server/src/platform/crypto/ids.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from './support/test-app.js';

/** `/metrics` over a real socket, parsed as Prometheus text exposition format. */
let t: TestApp;
let base: string;

beforeAll(async () => {
  t = await createTestApp({ env: { STELLWERK_NODE_NAME: 'metrics-node' } });
  await t.services.heartbeat.start();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await t.services.heartbeat.stop();
  await t.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text format strictly: any line it cannot read fails the test. */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (-?[\d.e+-]+|NaN|\+Inf|-Inf)$/.exec(line);
    if (!sample) throw new Error(`not Prometheus text: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[key!] = value!;
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) });
  }
  return { samples, types };
}

describe('GET /metrics', () => {
  it('exposes process metrics and request latency per route template, never raw ids', async () => {
    const login = await fetch(`${base}/xapi/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const { token } = (await login.json()) as { token: string };
    const unknownId = newId();
    const found = await fetch(`${base}/xapi/v1/accounts/${t.rootAccountId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(found.status).toBe(200);
    const missing = await fetch(`${base}/xapi/v1/accounts/${unknownId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(missing.status).toBe(404);
    // An API path no route matches (other paths are the console's, served for its own router).
    expect((await fetch(`${base}/xapi/v1/no/such/route/${unknownId}`)).status).toBe(404);
    // A console path: its label must not carry the id either (checked below).
    await fetch(`${base}/no/such/page/${unknownId}`);

    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const { samples, types } = parsePrometheus(text);

    // Process metrics, labelled with the node.
    for (const name of [
      'stellwerk_process_resident_memory_bytes',
      'stellwerk_process_cpu_seconds_total',
      'stellwerk_nodejs_eventloop_lag_seconds',
      'stellwerk_nodejs_heap_size_used_bytes',
    ]) {
      const sample = samples.find((s) => s.name === name);
      expect(sample, name).toBeDefined();
      expect(sample!.labels.node).toBe('metrics-node');
    }
    expect(samples.find((s) => s.name === 'stellwerk_process_resident_memory_bytes')!.value).toBeGreaterThan(
      10_000_000,
    );

    // Latency per route template and status.
    expect(types.get('stellwerk_http_request_duration_seconds')).toBe('histogram');
    const count = (route: string, status: string) =>
      samples.find(
        (s) =>
          s.name === 'stellwerk_http_request_duration_seconds_count' &&
          s.labels.method === 'GET' &&
          s.labels.route === route &&
          s.labels.status === status,
      )?.value;
    expect(count('/xapi/v1/accounts/:id', '200')).toBe(1);
    expect(count('/xapi/v1/accounts/:id', '404')).toBe(1);
    // Every GET path no API route matches falls to the console's catch-all `/*` (an API prefix gets 404).
    expect(count('/*', '404')).toBe(1);
    const routeLabels = new Set(samples.map((s) => s.labels.route).filter(Boolean));
    expect(
      [...routeLabels].some((route) => route!.includes(t.rootAccountId) || route!.includes(unknownId)),
    ).toBe(false);
    expect(text).not.toContain(t.rootAccountId);
    expect(text).not.toContain(unknownId);
    expect(text).not.toContain(token);

    // Node gauges, read from the stored heartbeats: this node's own beat is the one row.
    expect(types.get('stellwerk_nodes')).toBe('gauge');
    const nodes = Object.fromEntries(
      samples
        .filter((s) => s.name === 'stellwerk_nodes')
        .map((s): [string, number] => [s.labels.status ?? '', s.value]),
    );
    expect(nodes).toEqual({ ok: 1, faulty: 0, stopped: 0 });
  });
});
