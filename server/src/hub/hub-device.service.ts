import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach } from '../accounts/account.service.js';
import { DeviceState, VirtualDevice } from '../devices/virtual-device.entity.js';
import { MAX_ARRAY_ITEMS, PacketRefusedError, type PacketSink } from '../ingest/ingest.types.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import { AppError, errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';

export const HUB_DEVICE_SORTABLE = ['title', 'createdAt', 'lastSeen'] as const;

/**
 * What the legacy hub API reads and pushes. Hub principals are API keys, which see every
 * permission scope of their account subtree (api-keys), so only tenancy is checked here.
 * Reads the devices domain's tables read-only; writes go through the packet store like every
 * other front door, never to device states directly.
 */
export class HubDeviceService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly sink: PacketSink,
    private readonly recordPackets: (connectorId: string, result: 'in' | 'failed', count?: number) => void,
  ) {}

  /** Devices of the key's account and its sub-accounts. */
  async list(principal: Principal, params: ListParams): Promise<ListResult<VirtualDevice>> {
    const where: FilterQuery<VirtualDevice> = { account: { path: { $contains: [principal.accountId] } } };
    if (params.search) where.title = { $ilike: likePattern(params.search) };
    const [rows, total] = await this.em().findAndCount(VirtualDevice, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<VirtualDevice> {
    const device = await this.em().findOne(VirtualDevice, { id }, { populate: ['account'] });
    if (!device || !canReach(principal, device.account)) throw errors.notFound('Device', id);
    return device;
  }

  async getWithStates(
    principal: Principal,
    id: string,
  ): Promise<{ device: VirtualDevice; states: DeviceState[] }> {
    const device = await this.get(principal, id);
    const states = await this.em().find(DeviceState, { device: device.id }, { orderBy: { key: 'asc' } });
    return { device, states };
  }

  /**
   * Data pushed for a device becomes one packet of its connector, exactly as if the device had sent
   * it; resolves once stored. A JSON array may hold at most MAX_ARRAY_ITEMS items.
   */
  async push(principal: Principal, id: string, body: unknown): Promise<void> {
    const device = await this.get(principal, id);
    if (!device.connector) {
      throw errors.unprocessable(
        'DEVICE_HAS_NO_CONNECTOR',
        'The device has no connector to receive data for',
      );
    }
    const connectorId = device.connector.id;
    if (Array.isArray(body) && body.length > MAX_ARRAY_ITEMS) {
      this.recordPackets(connectorId, 'failed');
      throw errors.unprocessable(
        'TOO_MANY_ITEMS',
        `At most ${MAX_ARRAY_ITEMS} items per packet; this one has ${body.length}`,
        [{ limit: MAX_ARRAY_ITEMS, received: body.length }],
      );
    }
    try {
      await this.sink.append({
        connectorId,
        deviceKey: device.deviceId,
        payload: Buffer.from(JSON.stringify(body)),
        source: 'hub',
        receivedAt: new Date(),
      });
    } catch (error) {
      this.recordPackets(connectorId, 'failed');
      const code = error instanceof PacketRefusedError ? error.code : 'INGEST_FAILED';
      throw new AppError(code, 503, `The packet was not stored: ${safeErrorMessage(error)}; retry`, [], {
        'retry-after': '1',
      });
    }
    this.recordPackets(connectorId, 'in');
  }
}
