import { normalizeIP } from '@fastify/rate-limit';

/**
 * The client an address stands for, as budgets and throttles count it: an IPv4 address, or an
 * IPv6 /64 (a host may pick any address of its /64 at will, so single IPv6 addresses would be free
 * fresh budgets). An IPv4-mapped IPv6 address is its IPv4 address.
 */
export const clientAddress = (ip: string): string => normalizeIP(ip, 64);
