import { createRequire } from 'node:module';

/**
 * Imported first by the process entry (main.ts), before anything loads `mqtt-packet`.
 *
 * `mqtt-packet`'s parser and writer call a `debug` logger about twenty times per packet, and the
 * `debug` package's logger takes its arguments as a rest parameter: every call allocates an array
 * before it finds the logger disabled. At 10,000 msg/s that was more than a quarter of the broker
 * thread's allocations, so its young collections came that much more often (ADR 0142).
 * `mqtt-packet`'s namespaces that are disabled when it loads get a logger that does nothing; with
 * `DEBUG=mqtt-packet:*` they log as before. Every other namespace gets `debug`'s own logger.
 */
const requireFromPacket = createRequire(createRequire(import.meta.url).resolve('mqtt-packet'));
type CreateDebug = ((namespace: string) => unknown) & { enabled(namespace: string): boolean };
const createDebug = requireFromPacket('debug') as CreateDebug;
// Loaded by the line above, so in the cache: later `require('debug')` calls get its `exports`.
const debugModule = requireFromPacket.cache[requireFromPacket.resolve('debug')];

const silent = (): void => undefined;

const PACKET_NAMESPACE = 'mqtt-packet:';

if (debugModule) {
  debugModule.exports = new Proxy(createDebug, {
    apply(target, thisArg, args: unknown[]) {
      const namespace = args[0];
      if (
        typeof namespace === 'string' &&
        namespace.startsWith(PACKET_NAMESPACE) &&
        !target.enabled(namespace)
      )
        return silent;
      return Reflect.apply(target, thisArg, args) as unknown;
    },
  });
}
