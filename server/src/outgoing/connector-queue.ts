import type { OutgoingMessage, OutgoingOrigin, OutgoingSendResult } from '../integration/ports.js';
import type { DeliveryOptions } from './delivery.js';

export interface QueuedMessage {
  /** Stable across retries (the webhook-id of signed webhooks). */
  id: string;
  message: OutgoingMessage;
  origin: OutgoingOrigin;
  enqueuedAt: number;
}

/**
 * The bounded queue of one outgoing connector. Full: `drop-newest` refuses the new message,
 * `drop-oldest` makes room by dropping the head. Either way the drop is reported through
 * `onDrop`, so it is counted and logged; memory never grows past `queueSize` messages.
 */
export class ConnectorQueue {
  private items: QueuedMessage[] = [];
  private head = 0;

  constructor(
    private options: DeliveryOptions,
    private readonly onDrop: (dropped: QueuedMessage, reason: 'queue-full') => void,
  ) {}

  get depth(): number {
    return this.items.length - this.head;
  }

  /** New settings (queue size, overflow) apply from the next message on. */
  configure(options: DeliveryOptions): void {
    this.options = options;
    while (this.depth > options.queueSize) this.onDrop(this.take()!, 'queue-full');
  }

  push(item: QueuedMessage): OutgoingSendResult {
    if (this.depth >= this.options.queueSize) {
      if (this.options.overflow === 'drop-newest') {
        this.onDrop(item, 'queue-full');
        return { queued: false, reason: 'queue-full' };
      }
      this.onDrop(this.take()!, 'queue-full');
    }
    this.items.push(item);
    return { queued: true };
  }

  take(): QueuedMessage | undefined {
    if (this.depth === 0) return undefined;
    const item = this.items[this.head]!;
    this.head += 1;
    // Compact now and then instead of shifting on every take (O(1) amortised).
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Everything still waiting (deactivation, shutdown). */
  drain(): QueuedMessage[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}
