import type { OutgoingSender } from '../outgoing/delivery.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import type { Connector } from './connector.entity.js';

/**
 * What a kind actually does in this version; the console shows kinds without `receives`/`sends`
 * as "stored only" (docs/adr/0071-connector-kinds.md).
 * - `broker`: devices log in to the embedded broker with issued credentials.
 * - `webhook`: an incoming webhook URL (`apiEndpoint`) is issued.
 * - `subscribe`: the server keeps a client connection to an external system.
 * - `receives` / `sends`: packets flow in / out through this kind.
 */
export type ConnectorCapability = 'broker' | 'webhook' | 'subscribe' | 'receives' | 'sends';

export interface ConfigProblem {
  path: string;
  message: string;
}

/** One packet a webhook body yields: the sender's `device_id` and the payload bytes for the driver. */
export interface WebhookItem {
  deviceKey: string;
  payload: Buffer;
}

export interface KindContext {
  secretBox: SecretBox;
}

/**
 * A connector kind is a plugin: `connectors/kinds/<type>.kind.ts`, registered in
 * `connectors/kinds/index.ts`. Incoming kinds that keep a connection open (mqtt-in) implement
 * `start`/`stop`; the connector service calls them on create, activate, deactivate and delete.
 */
export interface ConnectorKind {
  type: string;
  direction: 'incoming' | 'outgoing';
  /** Empty for kinds the data model admits but that do nothing yet. */
  capabilities: readonly ConnectorCapability[];
  /** Problems with the kind's settings as `{ path, message }`; empty when valid. */
  validate(config: Record<string, unknown>): ConfigProblem[];
  /** Settings as stored: secrets sealed; a masked or missing secret keeps the previous one. */
  prepareConfig?(
    config: Record<string, unknown>,
    previous: Record<string, unknown> | undefined,
    ctx: KindContext,
  ): Record<string, unknown>;
  /** Settings as returned by the API: secrets masked. */
  publicConfig?(config: Record<string, unknown>): Record<string, unknown>;
  /**
   * Webhook kinds: turns a request body into packets. Throws `AppError` for a body the kind cannot
   * accept (the webhook handler logs it to the connector log).
   */
  webhookItems?(body: unknown, connector: Connector): WebhookItem[];
  start?(connector: Connector): Promise<void>;
  stop?(connectorId: string): Promise<void>;
  /** Outgoing kinds: delivers messages the dispatcher (server/src/outgoing/) queued. */
  sender?: OutgoingSender;
}
