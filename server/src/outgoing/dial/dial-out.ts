import net from 'node:net';
import tls from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import type { Kafka, KafkaConfig } from 'kafkajs';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { TargetRefusedError, type TargetGuard } from '../target-guard.js';
import { guardedFetch, type DialFetchInit } from './http-client.js';
import { guardedKafka } from './kafka-client.js';
import { guardedMqtt } from './mqtt-client.js';
import { guardedSmtp } from './smtp-client.js';

/**
 * The one door to targets that tenants configure: the brokers and endpoints of connectors
 * (mqtt-in, webhook-out, mqtt-out, kafka-out, smtp-mail and its OAuth token endpoint) and the
 * OAuth provider of an account. Every connection starts in `socket`, so every client is held to
 * the target guard (SSRF protection, STELLWERK_OUTGOING_ALLOW_PRIVATE) at connect time:
 * - a host name is resolved once, by the guard's `lookup`, and the socket connects to exactly the
 *   addresses that were judged (no DNS rebinding between check and connect);
 * - an IP literal is judged before any socket exists;
 * - HTTP redirects are new connections through here, so each hop is judged again.
 * A refused target fails with TargetRefusedError and nothing is sent anywhere.
 * dial-out.structure.test.ts fails when a module outside this folder connects by itself.
 */

export interface DialTarget {
  /** Host name or IP literal (IPv6 with or without brackets). */
  host: string;
  port: number;
  /** TLS from the first byte; the certificate is checked against `host` unless `servername` says otherwise. */
  tls?: Omit<tls.ConnectionOptions, 'host' | 'port' | 'socket' | 'lookup' | 'path'>;
}

export class DialOut {
  constructor(
    readonly guard: TargetGuard,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * A TCP (or TLS) socket to an allowed target. Returned at once, like `net.connect`; `onConnect`
   * runs once it is connected (after the TLS handshake with `tls`), a refusal arrives as 'error'.
   */
  socket(target: DialTarget, onConnect?: () => void): net.Socket {
    const host = target.host.replace(/^\[(.*)\]$/, '$1');
    if (net.isIP(host) && this.guard.refuses(host, host)) {
      return refusedSocket(new TargetRefusedError(host, host));
    }
    const where = { host, port: target.port, lookup: this.guard.lookup };
    if (!target.tls) return net.connect(where, onConnect);
    return tls.connect(
      { ...(net.isIP(host) ? {} : { servername: host }), ...target.tls, ...where },
      onConnect,
    );
  }

  /** `fetch` over `socket`: see http-client.ts for what differs from the global one. */
  fetch(url: string | URL, init?: DialFetchInit): Promise<Response> {
    return guardedFetch(this, url, init);
  }

  /** An mqtt.js client (mqtt, mqtts, ws, wss) whose every (re)connect goes through `socket`. */
  mqtt(url: string, options: IClientOptions): MqttClient {
    return guardedMqtt(this, url, options);
  }

  /** A kafkajs client that reaches every broker (also those the cluster names) through `socket`. */
  kafka(config: Omit<KafkaConfig, 'socketFactory' | 'logLevel' | 'logCreator'>): Kafka {
    return guardedKafka(this, config);
  }

  /** A nodemailer SMTP transport that connects through `socket`. */
  smtp(options: Omit<SMTPTransport.Options, 'getSocket' | 'url' | 'service'>): Transporter {
    return guardedSmtp(this, options);
  }

  /**
   * Keeps the cause of a failed connection for operators (debug level): tenants are told only
   * that it could not be made (connect-failure.ts).
   */
  connectFailed(error: unknown, context: Record<string, unknown>): void {
    this.log.debug({ err: error, ...context }, 'outgoing: could not connect');
  }
}

/** A socket that never connects and fails with `error` as soon as the caller listens. */
function refusedSocket(error: Error): net.Socket {
  const socket = new net.Socket();
  process.nextTick(() => socket.destroy(error));
  return socket;
}
