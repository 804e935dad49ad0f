import { TargetRefusedError } from '../target-guard.js';

/**
 * What a tenant reads when a connection to their target could not be made. Refused, unreachable,
 * reset, timed out, a failed TLS handshake or a peer that speaks another protocol all read the
 * same, so a connector or an OAuth configuration cannot be used to map which ports are open on
 * the server's network. The cause goes to the server's log (DialOut.connectFailed, debug level).
 */
export const couldNotConnect = (target: string): string =>
  `Could not connect to ${target}; an administrator finds the cause in the server log`;

/** The guard's refusal behind `error` (itself or a cause), if that is what it is. */
export function refusalOf(error: unknown): TargetRefusedError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    if (e instanceof TargetRefusedError) return e;
  }
  return undefined;
}
