import net from 'node:net';
import { ConfigError, constant, type Parser } from './config-values.js';
import { variable } from './config-variable.js';

/** Inclusive UDP port ranges LwM2M connectors may listen on. */
export type PortRanges = ReadonlyArray<readonly [number, number]>;

/** `5683`, `5683-5699`, or several separated by commas. */
const portRanges: Parser<PortRanges> = (raw, name) =>
  raw.split(',').map((part) => {
    const match = /^\s*(\d{1,5})(?:\s*-\s*(\d{1,5}))?\s*$/.exec(part);
    const from = Number(match?.[1]);
    const to = Number(match?.[2] ?? match?.[1]);
    if (!match || from < 1024 || to > 65535 || from > to)
      throw new ConfigError(
        name,
        `must be ports or ranges between 1024 and 65535 (e.g. 5683-5699), got "${part.trim()}"`,
      );
    return [from, to] as const;
  });

/** IP addresses, comma-separated; `0.0.0.0` and `::` stand for every interface. */
const addresses: Parser<string[]> = (raw, name) =>
  raw.split(',').map((part) => {
    const address = part.trim();
    if (!net.isIP(address)) throw new ConfigError(name, `must be IP addresses, got "${address}"`);
    return address;
  });

/**
 * What LwM2M connectors may listen on. Their server socket is opened by a tenant's settings, so the
 * operator decides which ports and addresses a tenant may open: by default a small range on loopback
 * only (no DTLS: whoever reaches the port can register as any device).
 */
export const LWM2M_VARIABLES = [
  variable({
    name: 'STELLWERK_LWM2M_PORTS',
    key: 'lwm2mPorts',
    description:
      'UDP ports LwM2M connectors may listen on: ports or ranges, comma-separated (1024–65535). A connector set to another port logs why it does not listen.',
    defaultText: '`5683-5699`',
    default: constant<PortRanges>([[5683, 5699]]),
    parse: portRanges,
  }),
  variable({
    name: 'STELLWERK_LWM2M_BIND_ADDRESSES',
    key: 'lwm2mBindAddresses',
    description:
      'Addresses LwM2M connectors may listen on, comma-separated; `0.0.0.0` or `::` allow every interface. The default keeps them on loopback: allow an interface address to reach devices (LwM2M runs without DTLS here).',
    defaultText: '`127.0.0.1,::1`',
    default: constant(['127.0.0.1', '::1']),
    parse: addresses,
  }),
];
