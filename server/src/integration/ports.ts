/**
 * The seams between the parts that are built side by side: rules, connector monitoring
 * and alarm reports (producers) hand messages to outgoing connectors and write alarm log entries;
 * integration flows (consumers) react to alarm log entries. Each side depends only on these types,
 * so neither needs the other's implementation to compile or to be tested.
 */

/** Who asked for an outgoing message; shown in connector logs and counted in `/metrics`. */
export interface OutgoingOrigin {
  kind: 'rule' | 'flow' | 'connector-monitoring' | 'alarm-report' | 'export-plan';
  id: string;
}

/**
 * One message for an outgoing connector. Each kind takes what it needs:
 * - webhook-out: `body` (JSON-encoded unless a string), extra `headers`;
 * - mqtt-out: `body`, `topic` (else the connector's default topic);
 * - kafka-out: `body`, `topic`, `key`;
 * - smtp-mail: `subject`, `body` as the text part, `to` (else the connector's default recipients),
 *   `attachments` (files read when the mail is sent).
 */
export interface OutgoingMessage {
  body: unknown;
  subject?: string;
  to?: string[];
  topic?: string;
  key?: string;
  headers?: Record<string, string>;
  attachments?: Array<{ filename: string; path: string; contentType?: string }>;
}

export type OutgoingSendResult =
  /** Accepted into the connector's bounded queue; delivery (with retries) happens later. */
  | { queued: true }
  /** Not accepted: the queue was full (counted as a drop) or the connector is inactive. */
  | { queued: false; reason: 'queue-full' | 'inactive' };

export interface OutgoingDispatch {
  /**
   * Queues a message for an outgoing connector of the account. Never waits for the target and
   * never throws because a target is down. Throws `AppError` (404) when the connector does not
   * exist in that account and (422) when it is not an outgoing kind.
   */
  send(
    accountId: string,
    connectorId: string,
    message: OutgoingMessage,
    origin: OutgoingOrigin,
  ): Promise<OutgoingSendResult>;
}

export type AlarmStatus = 'open' | 'acknowledged' | 'closed';

/** An alarm log entry as its listeners see it once it is committed. */
export interface AlarmEntry {
  id: string;
  accountId: string;
  category: string;
  message: string;
  status: AlarmStatus;
  /** The reference object, e.g. `{ type: 'connector', id }` or `{ type: 'digitalTwin', id }`. */
  reference: { type: string; id: string } | null;
  /** The rule, monitoring rule or report that wrote the entry, if any. */
  source: { kind: string; id: string } | null;
  /** `info`, `warning`, `minor`, `major` or `critical`. */
  severity: string;
  /** How often the condition was raised while the entry was not closed (1 for a new entry). */
  occurrenceCount: number;
  lastSeenAt: Date;
  details: Record<string, unknown>;
  createdAt: Date;
}

export type AlarmEntryListener = (entry: AlarmEntry) => void | Promise<void>;

/** Implemented by the alarm log; integration flows subscribe to start on alarm entries. */
export interface AlarmEntryEvents {
  onCreated(listener: AlarmEntryListener): void;
}
