import type { Body, OperationKey, PathParams, Query, Reply } from './generated';

/** The error body every Stellwerk route answers with, or a local stand-in (timeout, no network). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Part<T, Name extends string> = [T] extends [never] ? { [P in Name]?: never } : { [P in Name]: T };

export type CallArgs<K extends OperationKey> = Part<PathParams<K>, 'path'> &
  Partial<Part<Query<K>, 'query'>> &
  Part<Body<K>, 'body'> & {
    /** A bearer token instead of the cookie (the setup token of a mandatory 2FA enrolment). */
    bearer?: string;
    /** A public dashboard's key, sent as `x-api-key`. */
    apiKey?: string;
    /** Sends a text body as it is with this type (a CSV file as `text/csv`) instead of as JSON. */
    contentType?: string;
  };

type ArgsTuple<K extends OperationKey> =
  object extends CallArgs<K> ? [args?: CallArgs<K>] : [args: CallArgs<K>];

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The console's only way to the server: typed by the generated operation table, same-origin with
 * the session cookie, the CSRF header on every call, and a timeout (STELLWERK_API_TIMEOUT_MS).
 */
export class ApiClient {
  timeoutMs = DEFAULT_TIMEOUT_MS;
  /** Called when a signed-in call answers 401: the session ended elsewhere or expired. */
  onUnauthorized: (() => void) | undefined;

  constructor(private readonly baseUrl = '') {}

  /**
   * The URL of a GET route for a link the browser follows itself (a list's CSV download): the session
   * cookie authenticates it, and the browser streams the file to disk.
   */
  href<K extends OperationKey>(operation: K, ...[args]: ArgsTuple<K>): string {
    const { path, query } = (args ?? {}) as {
      path?: Record<string, string | number>;
      query?: Record<string, unknown>;
    };
    return this.baseUrl + expandPath(operation.split(' ')[1]!, path) + queryString(query);
  }

  async call<K extends OperationKey>(operation: K, ...[args]: ArgsTuple<K>): Promise<Reply<K>> {
    const { path, query, body, bearer, apiKey, contentType } = (args ?? {}) as {
      path?: Record<string, string | number>;
      query?: Record<string, unknown>;
      body?: unknown;
      bearer?: string;
      apiKey?: string;
      contentType?: string;
    };
    const raw = contentType !== undefined && typeof body === 'string';
    const [method, template] = operation.split(' ') as [string, string];
    const url = this.baseUrl + expandPath(template, path) + queryString(query);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-requested-with': 'stellwerk-console',
    };
    if (body !== undefined) headers['content-type'] = raw ? contentType : 'application/json';
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (apiKey) headers['x-api-key'] = apiKey;

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        credentials: 'same-origin',
        body: body === undefined ? null : raw ? body : JSON.stringify(body),
        signal: controller.signal,
      });
    } catch (error) {
      if (controller.signal.aborted) {
        throw new ApiError(0, 'TIMEOUT', `No answer within ${Math.round(this.timeoutMs / 1000)} s`);
      }
      throw new ApiError(0, 'NETWORK_ERROR', error instanceof Error ? error.message : String(error));
    } finally {
      clearTimeout(timer);
    }
    if (response.status === 204) return null;
    const payload = await readJson(response);
    if (!response.ok) {
      const error = toApiError(response, payload);
      if (error.status === 401 && error.code === 'INVALID_TOKEN' && !bearer) this.onUnauthorized?.();
      throw error;
    }
    return payload;
  }
}

function expandPath(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(String(value));
  });
}

function queryString(query: Record<string, unknown> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function toApiError(response: Response, payload: unknown): ApiError {
  const body = (payload as { error?: { code?: unknown; message?: unknown; details?: unknown } } | null)
    ?.error;
  if (body && typeof body.message === 'string') {
    return new ApiError(
      response.status,
      typeof body.code === 'string' ? body.code : `HTTP_${response.status}`,
      body.message,
      Array.isArray(body.details) ? (body.details as unknown[]) : [],
    );
  }
  const text = typeof payload === 'string' && payload.length < 300 ? payload : response.statusText;
  return new ApiError(response.status, `HTTP_${response.status}`, `HTTP ${response.status} ${text}`.trim());
}

export const api = new ApiClient();
