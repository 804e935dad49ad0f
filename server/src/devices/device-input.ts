import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach } from '../accounts/account.service.js';
import { Connector } from '../connectors/connector.entity.js';
import { DeviceDriver } from '../drivers/device-driver.entity.js';
import type { PermissionScopeService } from '../permission-scopes/permission-scope.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { errors, type AppError } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import type { DeviceTemplate } from '../templates/device-template.entity.js';
import type { DeviceTemplateService } from '../templates/device-template.service.js';
import { applyTemplate } from '../templates/template-sync.js';
import {
  checkHealthConfig,
  connectorUsableIn,
  driverUsableIn,
  applyIdentityRules,
  deviceIdProblem,
  identityRulesOf,
} from './device-references.js';
import { VirtualDevice, type ActivationMethod } from './virtual-device.entity.js';

/** What a create or update may set on a device (the API's field names). */
export interface VirtualDeviceInput {
  device_id?: string;
  title?: string;
  description?: string;
  active?: boolean;
  connectorId?: string | null;
  deviceDriverId?: string | null;
  deviceTemplateId?: string | null;
  parentId?: string | null;
  permissionScopeId?: string | null;
  tags?: string[];
  groups?: string[];
  keyValueData?: Record<string, unknown>;
  externalId?: string | null;
  referenceId?: string | null;
  targetReferenceId?: string | null;
  operationalStatus?: number | null;
  activationMethod?: ActivationMethod;
  skipFrameCounterCheck?: boolean;
  devEui?: string | null;
  endDeviceId?: string | null;
  application_session_key?: string | null;
  network_session_key?: string | null;
  healthConfig?: unknown;
  /** Back from `Deleting` or a failed remote deletion (spec: "Reactivation is possible"). */
  reactivate?: boolean;
}

/** 422 naming a referenced configuration the device's account cannot use. */
export const configNotAssigned = (what: string, id: string, path: string) =>
  errors.unprocessable('CONFIG_NOT_ASSIGNED', `${what} ${id} is not available in this account`, [
    problem(path, 'notFound', { id }),
  ]);

/**
 * Links `template` to `device` and applies it; the device needs a driver, its own or the template's.
 */
export function linkDeviceTemplate(device: VirtualDevice, template: DeviceTemplate): void {
  if (!device.driver && !template.driver) {
    throw errors.unprocessable(
      'DEVICE_WITHOUT_DRIVER',
      `Device ${device.id} has no device driver and the template supplies none; assign a driver first`,
      [{ deviceId: device.id }],
    );
  }
  device.template = template;
  applyTemplate(device, template);
}

/**
 * Turns API input into a device's fields: checks every reference (connector, driver, parent, scope,
 * template) against the device's account and the caller's scopes, and the identity the connector
 * kind requires, before anything is stored.
 */
export class DeviceInputApplier {
  constructor(
    private readonly em: () => EntityManager,
    private readonly permissionScopes: PermissionScopeService,
    private readonly templates: DeviceTemplateService,
    private readonly secretBox: SecretBox,
  ) {}

  /** Applies input to a device; `creating` makes device_id and title required. */
  async apply(
    principal: Principal,
    device: VirtualDevice,
    input: VirtualDeviceInput,
    creating: boolean,
  ): Promise<void> {
    const em = this.em();
    const account = device.account;
    // A stored device keeps working through edits that leave its id and connector alone.
    const connectorBefore = device.connector?.id;
    const deviceIdBefore = device.deviceId;
    if (input.title !== undefined) device.title = input.title.trim();
    if (!device.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) device.description = input.description;
    if (input.active !== undefined) device.active = input.active;
    if (input.tags !== undefined) device.tags = [...new Set(input.tags)];
    if (input.keyValueData !== undefined) device.keyValueData = input.keyValueData;
    for (const field of ['externalId', 'referenceId', 'targetReferenceId', 'endDeviceId'] as const) {
      if (input[field] !== undefined) device[field] = input[field] || null;
    }
    if (input.operationalStatus !== undefined) device.operationalStatus = input.operationalStatus;
    if (input.activationMethod !== undefined) device.activationMethod = input.activationMethod;
    if (input.skipFrameCounterCheck !== undefined) device.skipFrameCounterCheck = input.skipFrameCounterCheck;
    if (input.devEui !== undefined) device.devEui = input.devEui || null;
    // Session keys: only a non-empty value replaces them, so a round-tripped device never clears them.
    if (input.application_session_key)
      device.applicationSessionKeySealed = this.secretBox.seal(input.application_session_key);
    if (input.network_session_key)
      device.networkSessionKeySealed = this.secretBox.seal(input.network_session_key);

    if (input.connectorId !== undefined) {
      if (input.connectorId === null) device.connector = null;
      else {
        const connector = await em.findOne(Connector, { id: input.connectorId }, { populate: ['account'] });
        if (!connector || !canReach(principal, connector.account) || !connectorUsableIn(connector, account)) {
          throw configNotAssigned('Connector', input.connectorId, '/connectorId');
        }
        device.connector = connector;
      }
    }
    if (input.deviceDriverId !== undefined) {
      if (input.deviceDriverId === null) device.driver = null;
      else {
        const driver = await em.findOne(
          DeviceDriver,
          { id: input.deviceDriverId },
          { populate: ['account'] },
        );
        if (!driver || !driverUsableIn(driver, account)) {
          throw configNotAssigned('Device driver', input.deviceDriverId, '/deviceDriverId');
        }
        device.driver = driver;
      }
    }
    if (input.healthConfig !== undefined) {
      const driver = device.driver ? await em.findOne(DeviceDriver, { id: device.driver.id }) : null;
      device.healthConfig = checkHealthConfig(input.healthConfig, driver?.targetVariables);
    }
    if (input.parentId !== undefined) {
      if (input.parentId === null) device.parent = null;
      else {
        const parent = await em.findOne(VirtualDevice, { id: input.parentId, account });
        if (
          !parent ||
          parent.id === device.id ||
          !scopeFilter(principal).allows(parent.permissionScope?.id)
        ) {
          throw configNotAssigned('Parent device', input.parentId, '/parentId');
        }
        device.parent = parent;
      }
    }
    if (input.permissionScopeId !== undefined) {
      device.permissionScope =
        input.permissionScopeId === null
          ? null
          : ((
              await this.permissionScopes.assignable(
                principal,
                account,
                [input.permissionScopeId],
                (id): AppError => configNotAssigned('Permission scope', id, '/permissionScopeId'),
              )
            )[0] ?? null);
    }
    if (input.groups !== undefined) {
      const managed = device.template?.groups ?? [];
      const removed = managed.filter((g) => !input.groups!.includes(g));
      if (removed.length > 0) {
        throw errors.unprocessable(
          'TEMPLATE_MANAGED_GROUP',
          `Groups managed by the device template cannot be removed: ${removed.join(', ')}`,
          [{ path: '/groups', groups: removed }],
        );
      }
      device.groups = [...new Set(input.groups)];
    }
    if (input.deviceTemplateId !== undefined && input.deviceTemplateId !== (device.template?.id ?? null)) {
      if (input.deviceTemplateId === null) device.template = null;
      else {
        const template = await this.templates.usableIn(account, input.deviceTemplateId);
        if (!template)
          throw configNotAssigned('Device template', input.deviceTemplateId, '/deviceTemplateId');
        linkDeviceTemplate(device, template);
      }
    }
    if (input.device_id !== undefined) device.deviceId = input.device_id.trim();
    if (!device.deviceId)
      throw errors.validation('device_id is required', [problem('/device_id', 'required')]);
    const identityChanged =
      creating || device.connector?.id !== connectorBefore || device.deviceId !== deviceIdBefore;
    this.normaliseForConnector(device, creating, identityChanged);
    await this.assertDeviceIdFree(device);
  }

  /**
   * The connector kind's identity rules (EUI case, EndDevice ID, required fields); 400 for a missing
   * field, and for a device_id the kind cannot take when it or the connector is new.
   */
  private normaliseForConnector(device: VirtualDevice, creating: boolean, identityChanged: boolean): void {
    const type = device.connector?.type;
    const rules = identityRulesOf(type);
    const topicProblem = identityChanged ? deviceIdProblem(device.deviceId, rules) : null;
    if (topicProblem)
      throw errors.validation(topicProblem, [
        problem('/device_id', 'format', { format: 'mqtt-topic-level' }),
      ]);
    const missing = applyIdentityRules(device, rules, creating);
    if (missing.length > 0) {
      throw errors.validation(
        `A device on a ${type} connector needs ${missing.join(', ')}`,
        missing.map((field) => problem(`/${field}`, 'required')),
      );
    }
  }

  /** `device_id` is unique per connector (per account for devices without one): 409 otherwise. */
  private async assertDeviceIdFree(device: VirtualDevice): Promise<void> {
    const clash = await this.em().count(VirtualDevice, {
      deviceId: device.deviceId,
      id: { $ne: device.id },
      ...(device.connector ? { connector: device.connector } : { connector: null, account: device.account }),
    });
    if (clash > 0) {
      throw errors.conflict(
        'DEVICE_ID_TAKEN',
        `device_id "${device.deviceId}" is already used on this connector`,
        [problem('/device_id', 'unique', { value: device.deviceId })],
      );
    }
  }
}
