import type { ConnectorKind } from '../connector-kind.js';
import { maskSecrets, sealSecrets } from './config-fields.js';

/** Keys whose values are treated as secrets in the free-form settings of planned kinds. */
const SECRET_KEY = /(password|secret|token|apikey|api_key|privatekey|private_key|clientkey|client_key)$/i;

const secretKeys = (config: Record<string, unknown>) => Object.keys(config).filter((k) => SECRET_KEY.test(k));

/**
 * A kind the data model admits (spec, Connector kinds) but that does nothing yet: it can be
 * created, listed, activated and deleted; its `capabilities` are empty, so the console shows it
 * as "stored only". Settings are free-form; values under secret-looking keys are sealed and masked.
 */
export function plannedKind(type: string, direction: 'incoming' | 'outgoing'): ConnectorKind {
  return {
    type,
    direction,
    capabilities: [],
    validate: () => [],
    prepareConfig: (config, previous, ctx) =>
      sealSecrets(
        config,
        previous,
        [...new Set([...secretKeys(config), ...secretKeys(previous ?? {})])],
        ctx,
      ),
    publicConfig: (config) => maskSecrets(config, secretKeys(config)),
  };
}
