import { DeliveryError } from '../../outgoing/delivery.js';
import type { DownlinkSender } from '../../downlinks/downlink-delivery.js';
import type { LinkHost } from '../links/link.types.js';
import { FORMAT, normalisePath } from './lwm2m-content.js';
import { Lwm2mSession } from './lwm2m-session.js';

/**
 * Downlinks of an lwm2m connector: the bytes are a small JSON command (docs/connectors/lwm2m.md):
 * - `{"op":"read","path":"3303/0/5700"}`: the answer becomes a packet of the device, like a notification;
 * - `{"op":"write","path":"3311/0/5850","value":true}`: one resource, written as plain text (PUT);
 * - `{"op":"execute","path":"3/0/4","args":"0='now'"}`: POST with optional arguments.
 * The fPort is not used. A command that cannot be read fails at once; a client that is not
 * registered or does not answer is retried by the downlink queue.
 */

export type Lwm2mCommand =
  | { op: 'read'; path: string }
  | { op: 'write'; path: string; value: string | number | boolean }
  | { op: 'execute'; path: string; args?: string };

const bad = (message: string) => new DeliveryError(`LwM2M command: ${message}`, false);

export function parseCommand(bytes: Buffer): Lwm2mCommand {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw bad('the bytes must be a JSON object such as {"op":"read","path":"3/0/0"}');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('must be a JSON object');
  const { op, path: rawPath, value, args } = doc as Record<string, unknown>;
  const path = typeof rawPath === 'string' ? normalisePath(rawPath) : undefined;
  if (!path) throw bad('"path" must be an LwM2M path such as "3303/0/5700"');
  const depth = path.split('/').length;
  switch (op) {
    case 'read':
      return { op, path };
    case 'write':
      if (depth !== 3) throw bad('write takes the path of one resource (object/instance/resource)');
      if (
        !['string', 'number', 'boolean'].includes(typeof value) ||
        (typeof value === 'number' && !Number.isFinite(value))
      )
        throw bad('write needs a "value" that is a string, a number or true/false');
      return { op, path, value: value as string | number | boolean };
    case 'execute':
      if (depth !== 3) throw bad('execute takes the path of one resource (object/instance/resource)');
      if (args !== undefined && typeof args !== 'string') throw bad('"args" must be a string');
      return { op, path, ...(args !== undefined ? { args } : {}) };
    default:
      throw bad('"op" must be "read", "write" or "execute"');
  }
}

/** LwM2M plain text: booleans are 1 and 0. */
const plainText = (value: string | number | boolean) =>
  Buffer.from(typeof value === 'boolean' ? (value ? '1' : '0') : String(value), 'utf8');

const EXPECTED = { read: '2.05', write: '2.04', execute: '2.04' } as const;

export function lwm2mDownlinkSender(links: LinkHost): DownlinkSender {
  return {
    async send(connector, downlink) {
      const command = parseCommand(downlink.bytes);
      const session = links.session(connector.id);
      if (!(session instanceof Lwm2mSession))
        throw new DeliveryError('The LwM2M server of this connector is not listening', true);
      const endpoint = downlink.device.deviceKey;
      const answer = await session.request(
        endpoint,
        command.op === 'read'
          ? { method: 'GET', path: command.path }
          : command.op === 'write'
            ? { method: 'PUT', path: command.path, payload: plainText(command.value), format: FORMAT.text }
            : {
                method: 'POST',
                path: command.path,
                ...(command.args !== undefined
                  ? { payload: Buffer.from(command.args, 'utf8'), format: FORMAT.text }
                  : {}),
              },
      );
      if (answer.code !== EXPECTED[command.op])
        throw new DeliveryError(
          `${endpoint} answered ${command.op} of ${command.path} with ${answer.code}`,
          false,
        );
      if (command.op === 'read')
        await session.values({ endpoint }, command.path, answer.payload, answer.format, 'read');
      return { status: 'sent' };
    },
  };
}
