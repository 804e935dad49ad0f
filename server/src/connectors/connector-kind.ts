import type { Connector } from './connector.entity.js';

/**
 * A connector kind is a plugin: `connectors/kinds/<type>.kind.ts`, registered in
 * `connectors/kinds/index.ts`. Incoming kinds that keep a connection open (mqtt-in) implement
 * `start`/`stop`; the connector service calls them on create, activate, deactivate and delete.
 */
export interface ConnectorKind {
  type: string;
  direction: 'incoming' | 'outgoing';
  /** Problems with the kind's settings as `{ path, message }`; empty when valid. */
  validate(config: Record<string, unknown>): Array<{ path: string; message: string }>;
  /** Settings as stored: secrets sealed. */
  prepareConfig?(
    config: Record<string, unknown>,
    previous: Record<string, unknown> | undefined,
  ): Record<string, unknown>;
  /** Settings as returned by the API: secrets masked. */
  publicConfig?(config: Record<string, unknown>): Record<string, unknown>;
  start?(connector: Connector): Promise<void>;
  stop?(connectorId: string): Promise<void>;
}
