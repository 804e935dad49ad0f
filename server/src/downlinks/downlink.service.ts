import { RequestContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { Connector } from '../connectors/connector.entity.js';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import type { DownlinkEvent } from '../connectors/network-events.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import type { VirtualDeviceService } from '../devices/virtual-device.service.js';
import type { DriverParsing } from '../drivers/driver-parsing.service.js';
import { ParseError } from '../drivers/parser.types.js';
import type { RecordedScopes } from '../permission-scopes/recorded-scopes.js';
import { errors } from '../platform/errors.js';
import type { ListResult } from '../platform/http/list.js';
import { Downlink } from './downlink.entity.js';
import { checkFPort, checkOneSource, decodeBytes, type DownlinkInput } from './downlink-payload.js';

/**
 * The downlink queue per device (docs/lorawan.md, Downlinks): what callers queue, what the queue
 * worker (downlink-queue.ts) hands to the connector's kind, and how network-server events move an
 * item on: queued → sent → acknowledged | failed. Ended items never change again.
 */
export class DownlinkService {
  /** Told when an item is due, so the queue worker need not wait for its next look. */
  readonly dueListeners: Array<() => void> = [];

  constructor(
    private readonly em: () => EntityManager,
    private readonly devices: VirtualDeviceService,
    private readonly kinds: ConnectorKinds,
    private readonly parsing: DriverParsing,
    private readonly clock: () => Date,
  ) {}

  /** Queues a downlink; the caller has virtualDevice.manage, the device is checked visible here. */
  async queue(principal: Principal, deviceId: string, input: DownlinkInput): Promise<Downlink> {
    const device = await this.devices.get(principal, deviceId);
    return this.queueFor(device, input, principalRef(principal));
  }

  /**
   * Queues for a device of `accountId` within `scopes` (rule commands: a rule acts in its account,
   * over the devices of the scopes it recorded; null: all of them).
   */
  async queueInAccount(
    accountId: string,
    deviceId: string,
    input: DownlinkInput,
    createdBy: string,
    scopes: RecordedScopes,
  ): Promise<Downlink> {
    // Rules run outside any request: a context of its own for the entity manager.
    return RequestContext.create(this.em().fork(), async () => {
      const device = await this.em().findOne(VirtualDevice, { id: deviceId, account: accountId });
      const scope = device?.permissionScope?.id;
      const visible = device && (scopes === null || (scope !== undefined && scopes.includes(scope)));
      if (!visible) throw errors.notFound('Virtual device', deviceId);
      return this.queueFor(device, input, createdBy);
    });
  }

  /**
   * Whether a downlink to this device of the account needs an fPort: its connector's kind says so.
   * Null when the device is not found or its connector sends no downlinks (queueing refuses those).
   */
  async needsFPortInAccount(accountId: string, deviceId: string): Promise<boolean | null> {
    const device = await this.em().findOne(
      VirtualDevice,
      { id: deviceId, account: accountId },
      { populate: ['connector'] },
    );
    return device?.connector ? this.fPortNeeded(device.connector) : null;
  }

  /** Whether downlinks through this connector carry an fPort; null when its kind sends none. */
  private fPortNeeded(connector: Connector): boolean | null {
    const sender = this.kinds.get(connector.type)?.downlink;
    return sender ? (sender.needsFPort?.(connector) ?? false) : null;
  }

  /** Newest first; the caller has VirtualDevice.read, the device is checked visible here. */
  async list(
    principal: Principal,
    deviceId: string,
    page: number,
    pageSize: number,
  ): Promise<ListResult<Downlink>> {
    const device = await this.devices.get(principal, deviceId);
    const [data, total] = await this.em().findAndCount(
      Downlink,
      { device },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: pageSize, offset: (page - 1) * pageSize },
    );
    return { data, meta: { page, pageSize, total } };
  }

  private async queueFor(device: VirtualDevice, input: DownlinkInput, createdBy: string): Promise<Downlink> {
    const em = this.em();
    await em.populate(device, ['account', 'connector', 'driver', 'permissionScope']);
    const connector = device.connector;
    if (!connector) {
      throw errors.unprocessable('DEVICE_HAS_NO_CONNECTOR', 'The device has no connector to send through');
    }
    const kind = this.kinds.get(connector.type);
    if (!kind?.downlink) {
      throw errors.unprocessable(
        'DOWNLINK_NOT_SUPPORTED',
        `A ${connector.type} connector does not deliver downlinks`,
        [{ connectorId: connector.id, type: connector.type }],
      );
    }
    if (!connector.active)
      throw errors.unprocessable('CONNECTOR_INACTIVE', 'The device’s connector is inactive');
    if (device.lifecycleState === 'Deleting') {
      throw errors.conflict('DEVICE_DELETING', 'The device is being deleted at its network server');
    }
    const { payload, fPort } = await this.payloadOf(device, input, this.fPortNeeded(connector) === true);
    const downlink = new Downlink();
    const now = this.clock();
    Object.assign(downlink, {
      account: device.account,
      permissionScope: device.permissionScope,
      device,
      connector,
      deviceKey: device.deviceId,
      fPort,
      payload,
      confirmed: input.confirmed ?? false,
      nextAttemptAt: now,
      createdAt: now,
      updatedAt: now,
      createdBy,
    });
    await em.persistAndFlush(downlink);
    for (const listener of this.dueListeners) listener();
    return downlink;
  }

  private async payloadOf(device: VirtualDevice, input: DownlinkInput, needsFPort: boolean) {
    if (checkOneSource(input) === 'bytes') {
      return {
        payload: decodeBytes(input.bytes!, input.encoding),
        fPort: checkFPort(input.fPort, 'bytes', needsFPort),
      };
    }
    const driver = device.driver;
    if (!driver) {
      throw errors.unprocessable(
        'DEVICE_HAS_NO_DRIVER',
        'The device has no driver to encode data with; send bytes instead',
      );
    }
    let encoded;
    try {
      encoded = await this.parsing.encodeDownlink(
        driver,
        input.data,
        input.fPort !== undefined ? { fPort: input.fPort } : {},
      );
    } catch (error) {
      if (!(error instanceof ParseError)) throw error;
      const missing = /does not define function encodeDownlink/.test(error.message);
      throw errors.unprocessable(
        missing ? 'DOWNLINK_ENCODER_MISSING' : 'DOWNLINK_ENCODE_FAILED',
        error.message,
        [{ parseError: error.code, ...(error.logs.length ? { logs: error.logs } : {}) }],
      );
    }
    if (encoded.errors.length > 0) {
      throw errors.unprocessable(
        'DOWNLINK_ENCODE_FAILED',
        `The codec refused the downlink: ${encoded.errors.join('; ')}`,
        encoded.errors.map((message) => ({ message })),
      );
    }
    return {
      payload: Buffer.from(encoded.bytes),
      fPort: checkFPort(input.fPort ?? encoded.fPort, 'the codec', needsFPort),
    };
  }

  /**
   * Moves a downlink on from a network server's report. Found by Stellwerk's id, else by the
   * network server's id, else the oldest one of that device and connector that can take the step
   * (the network server names no id: the reports come in queue order). Unknown reports are ignored.
   */
  async applyEvent(event: DownlinkEvent): Promise<Downlink | null> {
    const em = this.em().fork();
    const downlink = await this.findFor(em, event);
    if (!downlink || !step(downlink, event)) return null;
    await em.flush();
    return downlink;
  }

  private async findFor(em: EntityManager, event: DownlinkEvent): Promise<Downlink | null> {
    const connector = event.connectorId;
    if (event.downlinkId && UUID.test(event.downlinkId)) {
      const found = await em.findOne(Downlink, { id: event.downlinkId, connector });
      if (found) return found;
    }
    if (event.remoteId) {
      const found = await em.findOne(Downlink, { remoteId: event.remoteId, connector });
      if (found) return found;
    }
    const base = { connector, deviceKey: event.deviceKey };
    const order = { orderBy: { createdAt: 'asc' as const, id: 'asc' as const } };
    if (event.status !== 'queued' && event.status !== 'sent') {
      const sent = await em.findOne(Downlink, { ...base, status: 'sent' }, order);
      if (sent) return sent;
    }
    return em.findOne(Downlink, { ...base, status: 'queued', handedOverAt: { $ne: null } }, order);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const principalRef = (p: Principal) =>
  p.kind === 'apiKey' ? `apiKey:${p.apiKeyId ?? p.id}` : `user:${p.id}`;

/** Applies the event's step when it moves the downlink forward; false when it does not. */
function step(downlink: Downlink, event: DownlinkEvent): boolean {
  if (downlink.status === 'acknowledged' || downlink.status === 'failed') return false;
  const handedOver = () => {
    downlink.handedOverAt ??= event.at;
    downlink.nextAttemptAt = null;
  };
  switch (event.status) {
    case 'queued':
      if (downlink.handedOverAt && downlink.nextAttemptAt === null) return false;
      handedOver();
      break;
    case 'sent':
      if (downlink.status === 'sent') return false;
      handedOver();
      downlink.status = 'sent';
      downlink.sentAt = event.at;
      break;
    case 'acknowledged':
      handedOver();
      downlink.status = 'acknowledged';
      downlink.sentAt ??= event.at;
      downlink.acknowledgedAt = event.at;
      break;
    case 'failed':
      handedOver();
      downlink.status = 'failed';
      downlink.error = (event.reason ?? 'The network server reported a failure').slice(0, 1000);
      break;
  }
  if (event.remoteId) downlink.remoteId ??= event.remoteId;
  return true;
}
