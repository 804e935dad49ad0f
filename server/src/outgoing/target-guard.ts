import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import net, { type LookupFunction } from 'node:net';
import { ConfigError } from '../config-values.js';

/**
 * SSRF protection for outgoing connectors. A user who may configure a webhook URL must not be able
 * to make the server call into its own network (metadata services, databases, admin consoles), so
 * every target host is resolved and refused when an address is loopback, private, link-local,
 * unique-local, carrier-grade NAT, multicast or unspecified, unless the administrator allowed it
 * (STELLWERK_OUTGOING_ALLOW_PRIVATE: on-site installations talk to machines next door).
 *
 * The guard only judges; connections are opened by dial/dial-out.ts, which connects through
 * `lookup` below, so the address checked is the address connected to (no DNS rebinding between
 * check and connect).
 */

const REFUSED = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  // (IPv4-mapped addresses are turned into IPv4 by `normalise`; a ::ffff:0:0/96 rule here would
  // also match every IPv4 address, as BlockList checks IPv4 against IPv6 rules in mapped form.)
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6');
}

/** The error code of a refused target, wherever it is reported. */
export const TARGET_REFUSED = 'OUTGOING_TARGET_REFUSED';

export class TargetRefusedError extends Error {
  readonly code = TARGET_REFUSED;
  constructor(
    readonly host: string,
    /** For the server's log only: tenants are not told where internal names point. */
    readonly address: string,
  ) {
    super(
      `The target ${host} ${net.isIP(host) ? 'is' : 'resolves to'} a loopback, private or link-local address; ` +
        'an administrator can allow it with STELLWERK_OUTGOING_ALLOW_PRIVATE',
    );
    this.name = 'TargetRefusedError';
  }
}

/** Resolves a host name to all its addresses (the system resolver unless a test hands in another). */
export type Resolve = (hostname: string, family: 0 | 4 | 6) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (hostname, family) => dnsLookup(hostname, { all: true, family });

/** Parses `STELLWERK_OUTGOING_ALLOW_PRIVATE`: `*`, CIDR ranges, addresses and host names. */
export function parseAllowList(raw: string, name: string): string[] {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    if (entry === '*') continue;
    const [address, prefix, extra] = entry.split('/');
    if (extra !== undefined) throw new ConfigError(name, `has a malformed entry "${entry}"`);
    if (prefix !== undefined) {
      const family = net.isIP(address!);
      const bits = Number(prefix);
      if (!family || !/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)) {
        throw new ConfigError(name, `has a malformed CIDR range "${entry}"`);
      }
    } else if (
      !net.isIP(entry) &&
      !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry)
    ) {
      throw new ConfigError(
        name,
        `has an entry that is neither an address, a CIDR range nor a host name: "${entry}"`,
      );
    }
  }
  return entries;
}

/** `::ffff:127.0.0.1` → `127.0.0.1`, so mapped addresses meet the IPv4 rules. */
function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  const hex = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, family: 'ipv4' };
  }
  return { address, family: net.isIPv6(address) ? 'ipv6' : 'ipv4' };
}

export class TargetGuard {
  private readonly allowAll: boolean;
  private readonly allowedRanges = new net.BlockList();
  private readonly allowedHosts = new Set<string>();

  constructor(
    allow: readonly string[],
    private readonly resolve: Resolve = systemResolve,
  ) {
    this.allowAll = allow.includes('*');
    for (const entry of allow) {
      if (entry === '*') continue;
      const [address, prefix] = entry.split('/');
      const family = net.isIP(address!);
      if (family && prefix !== undefined) {
        this.allowedRanges.addSubnet(address!, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
      } else if (family) {
        this.allowedRanges.addAddress(address!, family === 4 ? 'ipv4' : 'ipv6');
      } else {
        this.allowedHosts.add(entry.toLowerCase());
      }
    }
  }

  /** Whether a connection from `host` to `address` is refused. */
  refuses(host: string, rawAddress: string): boolean {
    if (this.allowAll || this.allowedHosts.has(host.toLowerCase().replace(/\.$/, ''))) return false;
    const { address, family } = normalise(rawAddress);
    try {
      if (!REFUSED.check(address, family)) return false;
      return !this.allowedRanges.check(address, family);
    } catch {
      // An address BlockList cannot read (an IPv6 zone index, say) is not one to connect to.
      return true;
    }
  }

  /**
   * A `lookup` for `net.connect`/`tls.connect`: resolves once and fails with TargetRefusedError
   * when any address is refused, so no connection is attempted and the socket connects to exactly
   * the addresses judged here. (IP literals skip `lookup`: judge them with `refuses` first.)
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    this.resolve(hostname, family).then(
      (addresses) => {
        const refused = addresses.find((a) => this.refuses(hostname, a.address));
        if (refused) return callback(new TargetRefusedError(hostname, refused.address), '', 0);
        const first = addresses[0];
        if (!first) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          error.code = 'ENOTFOUND';
          return callback(error, '', 0);
        }
        if (options.all) return callback(null, addresses);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
