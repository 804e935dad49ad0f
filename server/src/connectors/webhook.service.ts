import { PacketRefusedError, type PacketSink } from '../ingest/ingest.types.js';
import { AppError, errors } from '../platform/errors.js';
import type { Connector } from './connector.entity.js';
import type { ConnectorService } from './connector.service.js';

/**
 * Incoming webhooks (webhook-in, tts-uplink). The URL token is the credential. Each item of the
 * body becomes one packet; the reply (202) is sent only after every append resolved, so a 202
 * means every packet is durably stored. When the store refuses, the reply is 503 and the sender
 * retries the whole request (items already stored may then arrive twice: at-least-once).
 */
export class WebhookService {
  constructor(
    private readonly connectors: ConnectorService,
    private readonly sink: PacketSink,
  ) {}

  /** `connector`: the one the request's URL token names (null: no such token). */
  async receive(connector: Connector | null, body: unknown): Promise<{ accepted: number }> {
    const kind = connector && this.connectors.kind(connector.type);
    if (!connector || !kind?.webhookItems) throw errors.notFound('Webhook');
    if (!connector.active) {
      throw errors.forbidden('CONNECTOR_INACTIVE', 'The connector is deactivated and accepts no packets', [
        { connectorId: connector.id },
      ]);
    }
    let items;
    try {
      items = kind.webhookItems(body, connector);
    } catch (error) {
      this.connectors.recordPackets(connector.id, 'failed');
      const message = error instanceof Error ? error.message : String(error);
      await this.connectors.log(connector.id, 'warn', `Webhook refused: ${message}`, {
        code: error instanceof AppError ? error.code : 'INVALID_PAYLOAD',
      });
      throw error;
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
    return { accepted: items.length };
  }
}
