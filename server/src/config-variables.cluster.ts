import { constant, optionalUrl } from './config-values.js';
import { variable } from './config-variable.js';

/** Cluster mode (docs/scale-out.md; config-variables.ts lists them after DATABASE_URL). */
export const CLUSTER_VARIABLES = [
  variable({
    name: 'STELLWERK_REDIS_URL',
    key: 'redisUrl',
    description:
      'Redis (`redis://host:port/db`) shared by the nodes of a cluster. Set: cluster mode (needs `DATABASE_URL`); the embedded broker, live views and cache invalidation span every node, and a QoS 1 acknowledgement waits for the PostgreSQL commit. Unset: one node with its local spool.',
    defaultText: 'unset',
    default: constant(undefined),
    parse: optionalUrl(['redis:', 'rediss:']),
  }),
];
