import { PacketRefusedError, type PacketSink } from '../ingest/ingest.types.js';
import { AppError, errors } from '../platform/errors.js';
import type { NetworkMessage, WebhookRequest } from './connector-kind.js';
import type { Connector } from './connector.entity.js';
import type { ConnectorService } from './connector.service.js';
import type { NetworkEvents } from './network-events.js';

/**
 * Incoming webhooks (webhook-in and the LoRaWAN network-server kinds). The URL token is the
 * credential. Each item of the body becomes one packet; the reply (202) is sent only after every
 * append resolved, so a 202 means every packet is durably stored. When the store refuses, the reply
 * is 503 and the sender retries the whole request (items already stored may then arrive twice:
 * at-least-once). Downlink and gateway events of a network-server message go to the event bus once
 * its packets are stored; a failing subscriber never fails the request (network-events.ts).
 */
export class WebhookService {
  constructor(
    private readonly connectors: ConnectorService,
    private readonly sink: PacketSink,
    private readonly networkEvents: NetworkEvents,
  ) {}

  /**
   * `connector`: the one the request's URL token names (null: no such token); `request`: the path
   * after the token and the query, which network servers use to say the message type.
   */
  async receive(
    connector: Connector | null,
    body: unknown,
    request: WebhookRequest = { path: '', query: {} },
  ): Promise<{ accepted: number }> {
    const kind = connector && this.connectors.kind(connector.type);
    if (!connector || !kind?.webhookMessage) throw errors.notFound('Webhook');
    if (!connector.active) {
      throw errors.forbidden('CONNECTOR_INACTIVE', 'The connector is deactivated and accepts no packets', [
        { connectorId: connector.id },
      ]);
    }
    let message: NetworkMessage;
    try {
      message = kind.webhookMessage(body, connector, request);
    } catch (error) {
      // An unknown message path is a wrong URL, not a refused packet: nothing to count or log.
      if (error instanceof AppError && error.status === 404) throw error;
      this.connectors.recordPackets(connector.id, 'failed');
      const message = error instanceof Error ? error.message : String(error);
      await this.connectors.log(connector.id, 'warn', `Webhook refused: ${message}`, {
        code: error instanceof AppError ? error.code : 'INVALID_PAYLOAD',
      });
      throw error;
    }
    const { items } = message;
    for (const entry of message.logs) {
      await this.connectors.log(connector.id, entry.level, entry.message, entry.details);
    }
    const receivedAt = new Date();
    const results = await Promise.allSettled(
      items.map((item) =>
        this.sink.append({ connectorId: connector.id, ...item, source: 'webhook', receivedAt }),
      ),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    this.connectors.recordPackets(connector.id, 'in', results.length - failed.length);
    if (failed.length > 0) {
      this.connectors.recordPackets(connector.id, 'failed', failed.length);
      const reason = (failed[0] as PromiseRejectedResult).reason as Error;
      const code = reason instanceof PacketRefusedError ? reason.code : 'INGEST_FAILED';
      void this.connectors.log(connector.id, 'error', `Packets not stored: ${reason.message}`, {
        code,
        failed: failed.length,
        stored: results.length - failed.length,
      });
      throw new AppError(
        code,
        503,
        `${failed.length} of ${results.length} packets could not be stored; retry`,
        [{ stored: results.length - failed.length, failed: failed.length }],
        { 'retry-after': '1' },
      );
    }
    await this.networkEvents.emit(message.events);
    return { accepted: items.length };
  }
}
