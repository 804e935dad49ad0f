import type { FastifyBaseLogger } from 'fastify';
import type { OutgoingDispatch, OutgoingMessage, OutgoingOrigin, OutgoingSendResult } from './ports.js';

/**
 * The OutgoingDispatch rules, connector monitoring and alarm reports are given: it forwards to the
 * dispatcher of the outgoing connectors once one is attached (`use`). Until then a message is not
 * sent: logged and answered `{ queued: false, reason: 'inactive' }`, as for an inactive connector.
 * Tests attach a recording dispatcher the same way.
 */
export class OutgoingDispatchRef implements OutgoingDispatch {
  private target: OutgoingDispatch | undefined;

  constructor(private readonly log: FastifyBaseLogger) {}

  use(target: OutgoingDispatch | undefined): void {
    this.target = target;
  }

  async send(
    accountId: string,
    connectorId: string,
    message: OutgoingMessage,
    origin: OutgoingOrigin,
  ): Promise<OutgoingSendResult> {
    if (this.target) return this.target.send(accountId, connectorId, message, origin);
    this.log.warn({ connectorId, origin }, 'outgoing message not sent: no outgoing dispatcher attached');
    return { queued: false, reason: 'inactive' };
  }
}
