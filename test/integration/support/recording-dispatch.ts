import type {
  OutgoingDispatch,
  OutgoingMessage,
  OutgoingOrigin,
  OutgoingSendResult,
} from '../../../server/src/integration/ports.js';

export interface RecordedSend {
  accountId: string;
  connectorId: string;
  message: OutgoingMessage;
  origin: OutgoingOrigin;
}

/**
 * A real OutgoingDispatch that records what it is asked to send and queues nothing: the tests of
 * rules, monitoring and reports check what they hand over; delivery is the outgoing connectors' part.
 */
export class RecordingDispatch implements OutgoingDispatch {
  readonly sent: RecordedSend[] = [];

  async send(
    accountId: string,
    connectorId: string,
    message: OutgoingMessage,
    origin: OutgoingOrigin,
  ): Promise<OutgoingSendResult> {
    this.sent.push({ accountId, connectorId, message, origin });
    return { queued: true };
  }

  from(kind: OutgoingOrigin['kind'], id?: string): RecordedSend[] {
    return this.sent.filter((s) => s.origin.kind === kind && (id === undefined || s.origin.id === id));
  }
}
