import { Type } from 'typebox';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { linkKindRuntime } from '../links/link.types.js';
import { ConfigCheck } from './config-fields.js';
import { integer, oneOf, secret, settingsObject, text, tlsFields } from './settings-fields.js';
import { parsePointer } from './websocket/json-pointer.js';
import { websocketDownlinkSender } from './websocket/websocket-downlink.js';
import { DEFAULT_PING_INTERVAL_S, websocketDriver } from './websocket/websocket.link.js';

const MAX_HEADERS = 20;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Headers the WebSocket handshake sets itself; `authorization` comes from bearerToken when that is set. */
const RESERVED_HEADERS = /^(host|connection|upgrade|content-length|transfer-encoding|sec-websocket-.*)$/i;

/** Rules the schema cannot say: the URL scheme, header names, the pointer grammar, one way to name the device. */
function check(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  if (typeof config.url === 'string' && !/^wss?:\/\/[^\s/?#]+/i.test(config.url))
    check.problem('url', 'format', { format: 'ws-url' }, 'must be a ws:// or wss:// URL with a host');
  const headers = config.headers;
  if (headers !== undefined) {
    const entries = typeof headers === 'object' && headers !== null ? Object.entries(headers) : [];
    if (entries.length > MAX_HEADERS)
      check.problem(
        'headers',
        'maxProperties',
        { limit: MAX_HEADERS },
        `must have at most ${MAX_HEADERS} headers`,
      );
    for (const [name, value] of entries) {
      if (!HEADER_NAME.test(name) || RESERVED_HEADERS.test(name))
        check.custom(`headers/${name}`, 'is not a header name the connector may set');
      else if (typeof value !== 'string' || /[\r\n\0]/.test(value))
        check.custom(`headers/${name}`, 'must be one line of text');
    }
    if (config.bearerToken && entries.some(([name]) => name.toLowerCase() === 'authorization'))
      check.custom('headers/authorization', 'bearerToken sets the authorization header already');
  }
  const pointer = config.deviceIdPointer;
  if (typeof pointer === 'string' && (pointer === '' || parsePointer(pointer) === undefined))
    check.problem(
      'deviceIdPointer',
      'format',
      { format: 'json-pointer' },
      'must be a JSON pointer such as /device/id (RFC 6901)',
    );
  const named = [pointer, config.deviceId].filter((v) => v !== undefined && v !== '').length;
  if (named === 0)
    check.problem(
      'deviceIdPointer',
      'required',
      { missingProperty: 'deviceIdPointer' },
      'set either deviceIdPointer or deviceId',
    );
  else if (named > 1) check.custom('deviceIdPointer', 'set either deviceIdPointer or deviceId');
  if (config.messages === 'any' && pointer !== undefined)
    check.custom('deviceIdPointer', 'messages "any" are not read as JSON: use deviceId');
  check.pem('serverCa', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientCert', /-----BEGIN [A-Z ]+-----/);
  check.pem('clientKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  check.together('clientCert', 'clientKey');
  return check.problems;
}

/**
 * A WebSocket client (docs/connectors/websocket.md): connects to a ws:// or wss:// server through the
 * outgoing-target guard, keeps the connection with the link runtime (connectors/links/), turns each
 * JSON or binary message into packets and sends downlinks as messages.
 */
export const websocketKind: ConnectorKindDescriptor = {
  type: 'websocket',
  direction: 'incoming',
  summary:
    'Consumes messages from a WebSocket server (ws/wss, headers, bearer token, custom CA); JSON or binary, device by JSON pointer or fixed.',
  capabilities: ['subscribe', 'receives', 'downlink', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject(
    {
      url: text(2000, 'ws:// or wss:// URL of the server'),
      headers: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4000 }), {
        maxProperties: MAX_HEADERS,
        description: 'HTTP headers of the opening handshake (not secret: use bearerToken for a token)',
      }),
      bearerToken: secret(4000, 'Sent as Authorization: Bearer …'),
      ...tlsFields(),
      subscribeMessage: text(16_000, 'Sent as a text message once connected (e.g. a JSON subscribe request)'),
      messages: oneOf(
        ['json', 'any'],
        'json (default): each message is a JSON object or an array of objects; any: bytes for the driver',
      ),
      deviceIdPointer: text(500, 'JSON pointer to the device id in each object (e.g. /device/id)'),
      deviceId: text(200, 'The device every message belongs to (its driver decodes it)'),
      pingIntervalSeconds: integer(
        1,
        600,
        `Ping every so often; no pong by the next ping drops the connection (default ${DEFAULT_PING_INTERVAL_S})`,
      ),
      downlinkFormat: oneOf(
        ['json', 'binary'],
        'json (default): a downlink is a JSON object sent as text, with the device id at deviceIdPointer; binary: bytes as they are',
      ),
    },
    ['url'],
  ),
  check,
  devices: PLAIN_DEVICES,
  runtime: ({ links }) => ({
    ...linkKindRuntime(links, 'websocket', websocketDriver),
    downlink: websocketDownlinkSender(links),
  }),
};
