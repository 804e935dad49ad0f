import type { TestApp } from './test-app.js';

/** The value of one Prometheus sample from GET /metrics whose labels include `labels` (0 when absent). */
export async function metricValue(t: TestApp, name: string, labels: Record<string, string>): Promise<number> {
  const text = (await t.app.inject({ url: '/metrics' })).body;
  for (const line of text.split('\n')) {
    const match = /^(\w+)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const [, key, value] of match[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[key!] = value!;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return 0;
}

export interface LogEntry {
  level: string;
  message: string;
  details: Record<string, unknown>;
}

/** The connector log through the XAPI, newest first. */
export async function connectorLogs(t: TestApp, token: string, connectorId: string): Promise<LogEntry[]> {
  const response = await t.app.inject({
    url: `/xapi/v1/connectors/${connectorId}/logs`,
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.statusCode !== 200) throw new Error(`logs: ${response.statusCode} ${response.body}`);
  return response.json<{ data: LogEntry[] }>().data;
}
