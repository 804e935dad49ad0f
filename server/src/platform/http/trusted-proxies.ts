import net from 'node:net';
import { ConfigError } from '../../config-values.js';

/**
 * Named ranges as Fastify's trustProxy (proxy-addr) knows them: a proxy on the same machine is
 * `loopback`, one on the site network often `uniquelocal`.
 */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `STELLWERK_TRUST_PROXY`: addresses, CIDR ranges (IPv4 and IPv6) and named ranges, comma-separated,
 * in the form Fastify's `trustProxy` takes. Trusting everyone is not offered: any client could then
 * claim any address in `X-Forwarded-For` and get a fresh budget per claim.
 */
export function parseTrustedProxies(raw: string, name: string): string[] {
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    if (NAMED_RANGES.has(entry)) continue;
    if (entry === '*' || entry === 'true') {
      throw new ConfigError(name, 'cannot trust every address; name the proxies (addresses or CIDR ranges)');
    }
    const [address = '', prefix, extra] = entry.split('/');
    const family = net.isIP(address);
    const bits = Number(prefix);
    if (
      !family ||
      extra !== undefined ||
      (prefix !== undefined && (!/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)))
    ) {
      throw new ConfigError(
        name,
        `has an entry that is neither an address, a CIDR range nor loopback, linklocal or uniquelocal: "${entry}"`,
      );
    }
  }
  return entries;
}
