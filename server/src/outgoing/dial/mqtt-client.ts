import { MqttClient, type IClientOptions } from 'mqtt';
import WebSocket, { createWebSocketStream } from 'ws';
import type { DialOut, DialTarget } from './dial-out.js';

/**
 * mqtt.js clients for tenant-set broker URLs. mqtt.connect opens its own sockets (and would take
 * a SOCKS proxy from the environment), so the client is built here around a stream builder that
 * asks DialOut for every connection, reconnects included. The URL is read as mqtt.connect reads
 * it: credentials and `?clientId=` in the URL, a client certificate turns mqtt:// into TLS.
 */

const SCHEMES = new Set(['mqtt', 'tcp', 'mqtts', 'ssl', 'tls', 'ws', 'wss']);
const SECURE = new Set(['mqtts', 'ssl', 'tls', 'wss']);

export function guardedMqtt(dial: DialOut, url: string, options: IClientOptions): MqttClient {
  const target = new URL(url);
  const scheme = target.protocol.replace(/:$/, '').toLowerCase();
  if (!SCHEMES.has(scheme)) throw new Error(`${target.protocol}// is not an MQTT URL`);
  const opts: IClientOptions = { ...options };
  if (target.username && opts.username === undefined) opts.username = decodeURIComponent(target.username);
  if (target.password && opts.password === undefined) opts.password = decodeURIComponent(target.password);
  const clientId = target.searchParams.get('clientId');
  if (clientId) opts.clientId = clientId;
  const secure = SECURE.has(scheme) || Boolean(opts.cert && opts.key);
  const websocket = scheme === 'ws' || scheme === 'wss';
  const connect: DialTarget = {
    host: target.hostname,
    port: Number(target.port) || (websocket ? (secure ? 443 : 80) : secure ? 8883 : 1883),
    ...(secure
      ? {
          tls: {
            ...(opts.ca ? { ca: opts.ca } : {}),
            ...(opts.cert ? { cert: opts.cert } : {}),
            ...(opts.key ? { key: opts.key as string | Buffer } : {}),
            ...(opts.servername ? { servername: opts.servername } : {}),
            rejectUnauthorized: opts.rejectUnauthorized !== false,
          },
        }
      : {}),
  };
  const client = new MqttClient(
    websocket ? () => websocketStream(dial, target, secure, connect, opts) : () => dial.socket(connect),
    opts,
  );
  // As mqtt.connect does: an error nobody listens to must not end the process.
  client.on('error', () => undefined);
  return client;
}

/** MQTT over a WebSocket whose connection comes from DialOut (redirects are not followed). */
function websocketStream(
  dial: DialOut,
  target: URL,
  secure: boolean,
  connect: DialTarget,
  opts: IClientOptions,
) {
  const address = `${secure ? 'wss' : 'ws'}://${target.host}${target.pathname || '/'}${target.search}`;
  const subprotocol = opts.protocolId === 'MQIsdp' && opts.protocolVersion === 3 ? 'mqttv3.1' : 'mqtt';
  const socket = new WebSocket(address, [subprotocol], {
    createConnection: () => dial.socket(connect),
    followRedirects: false,
    ...(opts.connectTimeout ? { handshakeTimeout: opts.connectTimeout } : {}),
  });
  const stream = createWebSocketStream(socket);
  socket.on('close', () => stream.destroy());
  return stream;
}
