import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Connector } from '../connector.entity.js';
import { LinkError, type LinkDriver } from '../links/link.types.js';
import { Lwm2mSession, type Lwm2mSettings } from './lwm2m-session.js';

/** CoAP's registered port (RFC 7252 12.6), the LwM2M default without DTLS. */
export const DEFAULT_PORT = 5683;
/**
 * Loopback unless the connector says otherwise: without DTLS anyone who reaches the port can
 * register as any endpoint, so exposing it to a network is a choice made in the settings.
 */
export const DEFAULT_BIND_ADDRESS = '127.0.0.1';
export const DEFAULT_MAX_CLIENTS = 1000;

export function lwm2mSettings(config: Record<string, unknown>): Lwm2mSettings {
  return {
    port: typeof config.port === 'number' ? config.port : DEFAULT_PORT,
    bindAddress:
      typeof config.bindAddress === 'string' && config.bindAddress
        ? config.bindAddress
        : DEFAULT_BIND_ADDRESS,
    observe: Array.isArray(config.observe)
      ? config.observe.filter((p): p is string => typeof p === 'string')
      : [],
    maxClients: typeof config.maxClients === 'number' ? config.maxClients : DEFAULT_MAX_CLIENTS,
  };
}

/** UDP ports held by lwm2m connectors of this server process → the connector holding it. */
const claimed = new Map<number, string>();

/** Why a bind failed, in words a tenant may read (it is this server's own port, not a target). */
function bindFailure(error: NodeJS.ErrnoException, settings: Lwm2mSettings): LinkError {
  const where = `${settings.bindAddress}:${settings.port}`;
  if (error.code === 'EADDRINUSE') return new LinkError(`UDP port ${settings.port} is in use on this server`);
  if (error.code === 'EADDRNOTAVAIL')
    return new LinkError(`${settings.bindAddress} is not an address of this server`);
  if (error.code === 'EACCES') return new LinkError(`This server may not listen on ${where}`);
  return new LinkError(`Could not listen on ${where}`);
}

function bind(settings: Lwm2mSettings): Promise<Socket> {
  // No reuseAddr: a second socket on the same port must fail, not share the datagrams.
  const socket = createSocket({ type: isIPv6(settings.bindAddress) ? 'udp6' : 'udp4' });
  return new Promise((resolve, reject) => {
    socket.once('error', (error) => {
      socket.close();
      reject(bindFailure(error, settings));
    });
    socket.bind(settings.port, settings.bindAddress, () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}

/** What the operator lets LwM2M connectors listen on (STELLWERK_LWM2M_PORTS, STELLWERK_LWM2M_BIND_ADDRESSES). */
export interface Lwm2mListenPolicy {
  ports: ReadonlyArray<readonly [number, number]>;
  bindAddresses: readonly string[];
}

/** Without a server's settings (descriptor tests): the defaults of the variables. */
const DEFAULT_POLICY: Lwm2mListenPolicy = { ports: [[5683, 5699]], bindAddresses: ['127.0.0.1', '::1'] };

/** Why the operator's policy keeps a connector from listening where it asks, or undefined. */
function refusedByPolicy(settings: Lwm2mSettings, policy: Lwm2mListenPolicy): LinkError | undefined {
  if (!policy.ports.some(([from, to]) => settings.port >= from && settings.port <= to))
    return new LinkError(
      `UDP port ${settings.port} is not one LwM2M connectors may use here (STELLWERK_LWM2M_PORTS: ${policy.ports
        .map(([from, to]) => (from === to ? `${from}` : `${from}-${to}`))
        .join(',')})`,
    );
  if (!policy.bindAddresses.includes(settings.bindAddress))
    return new LinkError(
      `LwM2M connectors may not listen on ${settings.bindAddress} here (STELLWERK_LWM2M_BIND_ADDRESSES: ${policy.bindAddresses.join(',')})`,
    );
  return undefined;
}

/** The LwM2M server's link: the UDP socket it listens on (lwm2m-session.ts does the protocol). */
export const lwm2mLink = (policy: Lwm2mListenPolicy = DEFAULT_POLICY): LinkDriver<Lwm2mSession> => ({
  target(connector: Connector) {
    const settings = lwm2mSettings(connector.config);
    return `coap://${isIPv6(settings.bindAddress) ? `[${settings.bindAddress}]` : settings.bindAddress}:${settings.port}`;
  },
  async open(ctx) {
    const settings = lwm2mSettings(ctx.connector.config);
    const refused = refusedByPolicy(settings, policy);
    if (refused) throw refused;
    const holder = claimed.get(settings.port);
    if (holder !== undefined && holder !== ctx.connector.id)
      throw new LinkError(`UDP port ${settings.port} is used by another LwM2M connector`, {
        port: settings.port,
      });
    claimed.set(settings.port, ctx.connector.id);
    const release = () => {
      if (claimed.get(settings.port) === ctx.connector.id) claimed.delete(settings.port);
    };
    let socket: Socket;
    try {
      socket = await bind(settings);
    } catch (error) {
      release();
      throw error;
    }
    return new Lwm2mSession(ctx, settings, socket, release);
  },
});
