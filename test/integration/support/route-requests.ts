import { randomUUID } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import type { RouteInfo } from '../../../server/src/context.js';
import { sampleValue, type JsonSchema } from './schema-sample.js';

/** Builds requests for any route of the route table from its own schemas (ids are random UUIDs). */

export const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const routeKey = (route: RouteInfo): string => `${route.method} ${route.url}`;

const schemaOf = (route: RouteInfo, part: 'body' | 'querystring' | 'params') =>
  route.schema?.[part] as JsonSchema | undefined;

/** A request the route's schemas accept: `:id` a fresh UUID, other parameters and the body sampled. */
export function sampleRequest(route: RouteInfo, headers: Record<string, string>): InjectOptions {
  const params = schemaOf(route, 'params')?.properties ?? {};
  const url = route.url.replace(/:(\w+)/g, (_match, name: string) => {
    const value = name === 'id' ? randomUUID() : sampleValue(params[name], name);
    return encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value ?? randomUUID()));
  });
  const query = Object.fromEntries(
    Object.entries((sampleValue(schemaOf(route, 'querystring')) ?? {}) as Record<string, unknown>).map(
      ([name, value]) => [name, String(value)],
    ),
  );
  const body = STATE_CHANGING.has(route.method) ? sampleValue(schemaOf(route, 'body'), 'body') : undefined;
  return {
    method: route.method,
    url,
    query,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  };
}
