import { randomBytes } from 'node:crypto';
import type { Account } from '../accounts/account.entity.js';
import {
  PLAIN_DEVICES,
  type DeviceIdentityField,
  type DeviceIdentityRules,
} from '../connectors/connector-kind.js';
import type { Connector } from '../connectors/connector.entity.js';
import { CONNECTOR_KIND_DESCRIPTORS } from '../connectors/kinds/index.js';
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

const IDENTITY = new Map(CONNECTOR_KIND_DESCRIPTORS.map((kind) => [kind.type, kind.devices]));

/** How devices on a connector of this kind are identified (the kind's descriptor); none without a connector. */
export const identityRulesOf = (connectorType: string | undefined): DeviceIdentityRules =>
  (connectorType && IDENTITY.get(connectorType)) || PLAIN_DEVICES;

const EUI64 = /^[0-9A-Fa-f]{16}$/;

/** Characters a device_id that is one MQTT topic level cannot hold (NUL: no MQTT string may). */
const breaksTopicLevel = (deviceId: string) => /[/+#]/.test(deviceId) || deviceId.includes('\0');

/**
 * Why the kind cannot take this device_id, or null: on the embedded broker it is a level of the
 * device's topic, so a device with `/`, `+` or `#` in it could never publish.
 */
export function deviceIdProblem(deviceId: string, rules: DeviceIdentityRules): string | null {
  if (!rules.deviceIdIsTopicLevel || !breaksTopicLevel(deviceId)) return null;
  return `device_id "${deviceId}" cannot be used on the embedded MQTT broker: it is one level of the device's topic (connectors/{id}/devices/{device_id}/up), which cannot hold "/", "+" or "#"`;
}

/**
 * Applies a kind's identity rules to a device: LoRaWAN EUIs, and a `device_id` that is an EUI,
 * lower-cased (devices are matched by the lower-cased EUI), an EndDevice ID made when the kind wants one and `makeEndDeviceId`.
 * Returns the fields the kind requires that the device lacks.
 */
export function applyIdentityRules(
  device: { deviceId: string; devEui: string | null; endDeviceId: string | null; externalId: string | null },
  rules: DeviceIdentityRules,
  makeEndDeviceId: boolean,
): DeviceIdentityField[] {
  if (rules.lowerCaseEui && device.devEui) device.devEui = device.devEui.toLowerCase();
  // A device_id that is an EUI (as network servers show it, often upper-case) is matched against
  // the lower-cased EUI the kind reads from each message, so it is stored lower-cased too.
  if (rules.lowerCaseEui && EUI64.test(device.deviceId)) device.deviceId = device.deviceId.toLowerCase();
  if (rules.endDeviceId && makeEndDeviceId && !device.endDeviceId) {
    device.endDeviceId = endDeviceIdFor(device.deviceId, device.devEui);
  }
  return rules.required.filter((field) => !device[field]);
}

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
