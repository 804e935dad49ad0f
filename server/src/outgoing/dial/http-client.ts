import http from 'node:http';
import { TargetRefusedError } from '../target-guard.js';
import type { DialOut } from './dial-out.js';

/**
 * `fetch` for tenant-set URLs, on node:http over DialOut.socket (the global fetch cannot be
 * given a connector without undici's Agent). What differs from the global one:
 * - a refused target rejects with TargetRefusedError; every other failure (connect, TLS, timeout,
 *   abort, a peer that is no HTTP server, a body cut off) is `TypeError('fetch failed')` with the
 *   reason as `cause`, so callers cannot tell tenants apart what the network did;
 * - redirects are followed (at most 5, http and https only) as new connections through the
 *   guard; credentials are not carried to another origin;
 * - the answer's body is limited (`maxResponseBytes`, 1 MiB by default), it is not decompressed
 *   (no accept-encoding is sent), and ReadableStream request bodies are not supported.
 */

export interface DialFetchInit {
  method?: string;
  headers?: ConstructorParameters<typeof Headers>[0];
  body?: string | URLSearchParams | Uint8Array | ArrayBuffer | null;
  redirect?: 'follow' | 'manual' | 'error';
  signal?: AbortSignal | null;
  maxResponseBytes?: number;
}

const MAX_REDIRECTS = 5;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

const failed = (cause: unknown) => new TypeError('fetch failed', { cause });

export async function guardedFetch(
  dial: DialOut,
  input: string | URL,
  init: DialFetchInit = {},
): Promise<Response> {
  let url = new URL(input);
  let method = (init.method ?? 'GET').toUpperCase();
  const headers = new Headers(init.headers);
  let body = requestBody(init.body, headers);
  for (let hop = 0; ; hop += 1) {
    const response = await exchange(dial, url, method, headers, body, init);
    if (!REDIRECTS.has(response.status) || init.redirect === 'manual') return response;
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (init.redirect === 'error') throw failed(new Error(`redirected to ${location ?? '(nowhere)'}`));
    if (location === null) return response;
    if (hop >= MAX_REDIRECTS) throw failed(new Error(`more than ${MAX_REDIRECTS} redirects`));
    const next = new URL(location, url);
    if (
      response.status === 303 ? method !== 'HEAD' : [301, 302].includes(response.status) && method === 'POST'
    ) {
      method = 'GET';
      body = undefined;
      for (const name of ['content-type', 'content-length']) headers.delete(name);
    }
    if (next.origin !== url.origin) for (const name of CREDENTIALS) headers.delete(name);
    url = next;
  }
}

function requestBody(body: DialFetchInit['body'], headers: Headers): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (body instanceof URLSearchParams) {
    if (!headers.has('content-type'))
      headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    return Buffer.from(body.toString());
  }
  if (typeof body === 'string') {
    if (!headers.has('content-type')) headers.set('content-type', 'text/plain;charset=UTF-8');
    return Buffer.from(body);
  }
  return Buffer.from(body instanceof ArrayBuffer ? new Uint8Array(body) : body);
}

/** One request and its answer (headers; the body streams on). */
function exchange(
  dial: DialOut,
  url: URL,
  method: string,
  headers: Headers,
  body: Buffer | undefined,
  init: DialFetchInit,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:')
      return reject(failed(new Error(`${url.protocol} is not http(s)`)));
    const { signal } = init;
    if (signal?.aborted) return reject(failed(signal.reason));
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(url.port) || (secure ? 443 : 80);
    const outgoing: Record<string, string> = Object.fromEntries(headers);
    if (body) outgoing['content-length'] = String(body.length);
    let settled = false;
    const request = http.request({
      method,
      host,
      port,
      // The Host header then carries the port only when it is not the scheme's own.
      defaultPort: secure ? 443 : 80,
      path: `${url.pathname}${url.search}`,
      headers: outgoing,
      // No agent: each request gets a connection of its own from the door (TLS included).
      createConnection: () =>
        dial.socket({ host, port, ...(secure ? { tls: { ALPNProtocols: ['http/1.1'] } } : {}) }),
    });
    const onAbort = () => request.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    const fail = (error: Error) => {
      signal?.removeEventListener('abort', onAbort);
      if (settled) return;
      settled = true;
      reject(error instanceof TargetRefusedError ? error : failed(error));
    };
    request.on('error', fail);
    request.on('response', (res) => {
      settled = true;
      const answer = new Headers();
      for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
        answer.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      const status = res.statusCode ?? 0;
      const empty = NULL_BODY.has(status) || method === 'HEAD';
      try {
        resolve(
          new Response(empty ? null : bodyStream(res, init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES), {
            status,
            statusText: res.statusMessage ?? '',
            headers: answer,
          }),
        );
      } catch (error) {
        // new Response refuses statuses outside 200-599.
        res.destroy();
        reject(failed(error));
      }
      if (empty) res.resume();
      res.once('close', () => signal?.removeEventListener('abort', onAbort));
    });
    request.end(body);
  });
}

/** The answer's body, at most `max` bytes; a cut-off or oversized body errors as `fetch failed`. */
function bodyStream(res: http.IncomingMessage, max: number): ReadableStream<Uint8Array> {
  let done = false;
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const error = (cause: unknown) => {
        if (done) return;
        done = true;
        controller.error(failed(cause));
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (done) return;
        seen += chunk.length;
        if (seen > max) return error(new Error(`the answer is larger than ${max} bytes`));
        controller.enqueue(new Uint8Array(chunk));
      });
      res.once('end', () => {
        if (done) return;
        done = true;
        controller.close();
      });
      res.once('error', error);
      res.once('close', () => {
        if (!res.complete) error(new Error('the connection closed before the answer was complete'));
      });
    },
    cancel() {
      done = true;
      res.destroy();
    },
  });
}
