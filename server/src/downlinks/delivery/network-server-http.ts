import { openSecret } from '../../connectors/kinds/config-fields.js';
import type { Connector } from '../../connectors/connector.entity.js';
import { connectionFailed, DeliveryError, type DeliveryContext } from '../../outgoing/delivery.js';

/**
 * One call to a network server's HTTP API for the downlink and remote-delete senders, through the
 * outgoing-target guard (DialOut). 2xx answers its JSON body (or null); 408, 429, 5xx and targets
 * that cannot be reached are retryable DeliveryErrors; other statuses and refused targets are final,
 * with the server's own message (TTS and ChirpStack answer `{code, message}` / `{message}`).
 */

const TIMEOUT_MS = 15_000;
const MAX_REASON = 300;

export interface NetworkServerCall {
  method: 'POST' | 'DELETE';
  /** Path below the connector's `apiUrl`, with its segments already encoded. */
  path: string;
  body?: unknown;
  /** The bearer token: the name of a sealed secret in the connector's settings. */
  tokenSetting: string;
  /** Statuses that count as done besides 2xx (404 of a delete: the device was never there). */
  alsoDone?: readonly number[];
}

export function apiUrlOf(connector: Connector, path: string): URL {
  const base = typeof connector.config.apiUrl === 'string' ? connector.config.apiUrl : '';
  if (!/^https?:\/\//i.test(base)) {
    throw new DeliveryError(
      'The connector has no apiUrl (http:// or https://) for its network server',
      false,
    );
  }
  return new URL(base.replace(/\/+$/, '') + path);
}

export async function callNetworkServer(
  ctx: DeliveryContext,
  connector: Connector,
  call: NetworkServerCall,
): Promise<unknown> {
  const url = apiUrlOf(connector, call.path);
  const token = openSecret(connector.config, call.tokenSetting, ctx);
  if (!token)
    throw new DeliveryError(`The connector has no ${call.tokenSetting} for its network server`, false);
  const text = call.body === undefined ? undefined : JSON.stringify(call.body);
  let response: Response;
  try {
    response = await ctx.dial.fetch(url, {
      method: call.method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        'user-agent': 'Stellwerk-Downlink/1',
        ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(text !== undefined ? { body: text } : {}),
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw connectionFailed(ctx, error, url.origin, { connectorId: connector.id, target: url.origin });
  }
  const answer = await response.text().catch(() => '');
  const where = `${call.method} ${url.origin}${url.pathname}`;
  if ((response.status >= 200 && response.status < 300) || call.alsoDone?.includes(response.status)) {
    return parseJson(answer);
  }
  const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
  const said = messageOf(parseJson(answer)) ?? answer.trim();
  const reason = `${where} answered ${response.status}${said ? `: ${said}` : ''}`;
  throw new DeliveryError(reason.slice(0, MAX_REASON), retryable, `HTTP_${response.status}`);
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function messageOf(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message !== '' ? message : undefined;
}

/** A path segment from a setting or device field; a missing one is a final failure with its name. */
export function segment(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DeliveryError(`${what} is missing`, false, 'DOWNLINK_TARGET_INCOMPLETE');
  }
  return encodeURIComponent(value.trim());
}
