import type { FastifyBaseLogger } from 'fastify';
import type { Connector } from '../connectors/connector.entity.js';
import type { OutgoingMessage } from '../integration/ports.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { couldNotConnect, refusalOf } from './dial/connect-failure.js';
import type { DialOut } from './dial/dial-out.js';
import { TARGET_REFUSED } from './target-guard.js';

/**
 * What an outgoing connector kind plugs into the dispatcher (outgoing.dispatcher.ts): it delivers
 * one message, once. Queueing, retries with backoff, counting and logging are the dispatcher's.
 */

/** A failed delivery; `retryable` says whether trying again later can help (timeouts, 5xx, broker down). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly code = 'DELIVERY_FAILED',
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

export interface DeliveryContext {
  secretBox: SecretBox;
  /** The only way kinds connect to their targets (SSRF protection included). */
  dial: DialOut;
  log: FastifyBaseLogger;
}

/** One delivery attempt of a queued message; `messageId` stays the same across retries. */
export interface DeliveryAttempt {
  messageId: string;
  attempt: number;
}

export interface OutgoingSender {
  /** Delivers the message or throws (DeliveryError; anything else counts as retryable). */
  deliver(connector: Connector, message: OutgoingMessage, attempt: DeliveryAttempt): Promise<void>;
  /** Drops clients held for the connector: settings changed, deactivated or deleted. */
  release(connectorId: string): Promise<void>;
  /** Server stop: every client goes. */
  close(): Promise<void>;
}

export type OverflowPolicy = 'drop-newest' | 'drop-oldest';

/** Queue and retry settings every outgoing kind accepts (within these bounds). */
export interface DeliveryOptions {
  queueSize: number;
  overflow: OverflowPolicy;
  maxAttempts: number;
  retryDelayMs: number;
}

export const DELIVERY_DEFAULTS: DeliveryOptions = {
  queueSize: 1000,
  overflow: 'drop-newest',
  maxAttempts: 5,
  retryDelayMs: 1000,
};

/** Longest wait between two attempts, however many there were. */
export const MAX_RETRY_DELAY_MS = 60_000;

export function deliveryOptions(config: Record<string, unknown>): DeliveryOptions {
  const pick = <K extends keyof DeliveryOptions>(key: K): DeliveryOptions[K] =>
    (config[key] as DeliveryOptions[K] | undefined) ?? DELIVERY_DEFAULTS[key];
  return {
    queueSize: pick('queueSize'),
    overflow: pick('overflow'),
    maxAttempts: pick('maxAttempts'),
    retryDelayMs: pick('retryDelayMs'),
  };
}

/** Exponential backoff with ±20 % jitter: retryDelayMs, 2×, 4×, … capped at MAX_RETRY_DELAY_MS. */
export function backoffMs(options: DeliveryOptions, failedAttempts: number): number {
  const base = Math.min(MAX_RETRY_DELAY_MS, options.retryDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

/** The message body as bytes on the wire: strings as they are, everything else as JSON. */
export function encodeBody(body: unknown): { text: string; contentType: string } {
  if (typeof body === 'string') return { text: body, contentType: 'text/plain; charset=utf-8' };
  if (Buffer.isBuffer(body)) return { text: body.toString('utf8'), contentType: 'application/octet-stream' };
  return { text: JSON.stringify(body ?? null), contentType: 'application/json' };
}

/**
 * The DeliveryError for a connection that did not come about: final when the SSRF protection
 * refused the target, else retryable with one message whatever the cause (the cause goes to the
 * server's log only; dial/connect-failure.ts says why).
 */
export function connectionFailed(
  ctx: DeliveryContext,
  error: unknown,
  target: string,
  context: Record<string, unknown>,
): DeliveryError {
  const refused = refusalOf(error);
  if (refused) return new DeliveryError(refused.message, false, TARGET_REFUSED);
  ctx.dial.connectFailed(error, context);
  return new DeliveryError(couldNotConnect(target), true, 'CONNECT_FAILED');
}
