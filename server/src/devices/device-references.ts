import { randomBytes } from 'node:crypto';
import type { Account } from '../accounts/account.entity.js';
import type { Connector } from '../connectors/connector.entity.js';
import type { DeviceDriver, HealthConfig, TargetVariable } from '../drivers/device-driver.entity.js';
import { assertValidHealthConfig } from '../drivers/health-config.validator.js';

/**
 * Which connectors and drivers a device (or template) of an account may use. Connectors of the
 * account or an ancestor serve it (a site's broker serves its sub-accounts); drivers of the
 * account itself, or shared drivers of an ancestor.
 */
export const connectorUsableIn = (connector: Connector, account: Account): boolean =>
  account.path.includes(connector.account.id);

export const driverUsableIn = (driver: DeviceDriver, account: Account): boolean =>
  driver.account.id === account.id || (driver.shared && account.path.includes(driver.account.id));

/** Connector kinds of LoRaWAN network servers: their device EUIs are stored lower-case. */
export const LORAWAN_CONNECTOR_TYPES: ReadonlySet<string> = new Set(['tts-uplink', 'chirpstack', 'loriot']);
/** The Things Stack: devices created for it get an EndDevice ID when none is given. */
export const THINGS_STACK_CONNECTOR_TYPE = 'tts-uplink';

/**
 * A health configuration checked against the driver's target variables (drivers'
 * validator: 422 `INVALID_HEALTH_CONFIG`; `_raw` and `_parsed` are always valid states).
 */
export function checkHealthConfig(
  config: unknown,
  targetVariables: readonly TargetVariable[] = [],
): HealthConfig | null {
  if (config === null) return null;
  assertValidHealthConfig(config, targetVariables);
  return config as HealthConfig;
}

/** An EndDevice ID as The Things Stack accepts it: lower-case letters, digits and dashes, at most 36. */
export function endDeviceIdFor(deviceId: string, devEui: string | null): string {
  if (devEui) return `eui-${devEui.toLowerCase()}`.slice(0, 36);
  const slug = deviceId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 27);
  return `${slug || 'device'}-${randomBytes(4).toString('hex')}`;
}
