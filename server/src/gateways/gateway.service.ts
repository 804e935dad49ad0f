import type { EntityManager, FilterQuery } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import type { Principal } from '../auth/principal.js';
import { Connector } from '../connectors/connector.entity.js';
import type { PermissionScopeService } from '../permission-scopes/permission-scope.service.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors, type AppError } from '../platform/errors.js';
import { problem } from '../platform/http/problem-detail.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { Gateway, type GatewayStatus } from './gateway.entity.js';
import { figuresOf, type GatewayFigures } from './gateway-figures.js';
import type { UnknownGateway, UnknownGateways } from './unknown-gateways.js';

export const GATEWAY_SORTABLE = ['title', 'eui', 'status', 'lastSeenAt', 'createdAt', 'updatedAt'] as const;

export interface GatewayLocationInput {
  latitude: number;
  longitude: number;
  altitude?: number | null;
}

export interface GatewayInput {
  eui?: string;
  networkId?: string | null;
  title?: string;
  description?: string;
  tags?: string[];
  location?: GatewayLocationInput | null;
  connectorId?: string | null;
  permissionScopeId?: string | null;
  offlineAfterSeconds?: number | null;
}

export interface GatewayListFilter {
  accountId?: string;
  connectorId?: string;
  status?: GatewayStatus;
}

/** A device a gateway heard, as the devices-heard list shows it. */
export interface HeardDevice {
  deviceId: string;
  device_id: string;
  title: string;
  lastHeardAt: Date;
  rssi: number | null;
  snr: number | null;
  uplinks: number;
}

/** Lower-case hex without separators (`58-A0-CB-…` and `58A0CB…` are the same gateway). */
export const normaliseEui = (eui: string): string => eui.replace(/[-:\s]/g, '').toLowerCase();
const EUI = /^[0-9a-f]{16}$/;

const configNotAssigned = (what: string, id: string, path: string) =>
  errors.unprocessable('CONFIG_NOT_ASSIGNED', `${what} ${id} is not available in this account`, [
    problem(path, 'notFound', { id }),
  ]);

/**
 * LoRaWAN gateways. Callers have checked gateway.read / gateway.manage; here the account must be
 * reachable and the gateway visible through the caller's permission scopes (like devices). The
 * connector must be one of the gateway's own account.
 */
export class GatewayService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly permissionScopes: PermissionScopeService,
    private readonly clock: () => Date,
  ) {}

  async list(
    principal: Principal,
    params: ListParams,
    filter: GatewayListFilter,
  ): Promise<ListResult<Gateway>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const and: FilterQuery<Gateway>[] = [
      { account },
      scopeFilter(principal).where<Gateway>('permissionScope'),
    ];
    if (filter.connectorId) and.push({ connector: filter.connectorId });
    if (filter.status) and.push({ status: filter.status });
    if (params.search) {
      const like = likePattern(params.search);
      and.push({
        $or: [{ title: { $ilike: like } }, { eui: { $ilike: like } }, { networkId: { $ilike: like } }],
      });
    }
    const [rows, total] = await this.em().findAndCount(
      Gateway,
      { $and: and },
      {
        orderBy: [...params.orderBy.map((o) => ({ [o.field]: `${o.direction} nulls last` })), { id: 'asc' }],
        limit: params.pageSize,
        offset: params.offset,
      },
    );
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<Gateway> {
    const notFound = () => errors.notFound('Gateway', id);
    const gateway = await this.em().findOne(Gateway, { id }, { populate: ['account'] });
    if (!gateway || !canReach(principal, gateway.account)) throw notFound();
    scopeFilter(principal).assertVisible(gateway.permissionScope?.id, notFound);
    return gateway;
  }

  async create(principal: Principal, input: GatewayInput & { accountId?: string }): Promise<Gateway> {
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const gateway = new Gateway();
    gateway.account = account;
    gateway.createdAt = gateway.updatedAt = this.clock();
    if (input.permissionScopeId === undefined && scopeFilter(principal).restricted) {
      // A restricted caller could never see a gateway without a scope: give it the caller's first.
      input = { ...input, permissionScopeId: principal.permissionScopeIds![0] ?? null };
    }
    await this.apply(principal, gateway, input);
    await this.em().persistAndFlush(gateway);
    return gateway;
  }

  async update(principal: Principal, id: string, input: GatewayInput): Promise<Gateway> {
    const gateway = await this.get(principal, id);
    await this.apply(principal, gateway, input);
    await this.em().flush();
    return gateway;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const gateway = await this.get(principal, id);
    await this.em().removeAndFlush(gateway);
  }

  /** The last 24 h figures of gateways, by id (gateways without receptions get zeros). */
  figures(ids: readonly string[]): Promise<Map<string, GatewayFigures>> {
    return figuresOf(this.em(), ids, this.clock());
  }

  /** Devices the gateway heard, newest first; only devices the caller may see. */
  async devicesHeard(principal: Principal, id: string, params: ListParams): Promise<ListResult<HeardDevice>> {
    const gateway = await this.get(principal, id);
    const scope = scopeFilter(principal).sql('d.permission_scope_id');
    const from = `FROM gateway_devices gd JOIN virtual_devices d ON d.id = gd.device_id
      WHERE gd.gateway_id = ? AND (${scope.sql})`;
    const connection = this.em().getConnection();
    const [count, rows] = await Promise.all([
      connection.execute<Array<{ n: string }>>(`SELECT count(*) AS n ${from}`, [gateway.id, ...scope.params]),
      connection.execute<
        Array<{
          id: string;
          device_id: string;
          title: string;
          last_heard_at: Date;
          rssi: number | null;
          snr: number | null;
          uplinks: number;
        }>
      >(
        `SELECT d.id, d.device_id, d.title, gd.last_heard_at, gd.rssi, gd.snr, gd.uplinks ${from}
          ORDER BY gd.last_heard_at DESC, d.id LIMIT ? OFFSET ?`,
        [gateway.id, ...scope.params, params.pageSize, params.offset],
      ),
    ]);
    return listResult(
      rows.map((r) => ({
        deviceId: r.id,
        device_id: r.device_id,
        title: r.title,
        lastHeardAt: new Date(r.last_heard_at),
        rssi: r.rssi,
        snr: r.snr,
        uplinks: r.uplinks,
      })),
      Number(count[0]?.n ?? 0),
      params,
    );
  }

  /** Gateways heard in the account but not registered there (the receptions' in-memory list). */
  async unknown(
    principal: Principal,
    accountId: string | undefined,
    heard: UnknownGateways,
  ): Promise<UnknownGateway[]> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const candidates = heard.list(account.id, () => false);
    if (candidates.length === 0) return [];
    const registered = await this.em().find(
      Gateway,
      {
        account,
        $or: [
          { eui: { $in: candidates.flatMap((c) => (c.eui ? [c.eui] : [])) } },
          { networkId: { $in: candidates.flatMap((c) => (c.networkId ? [c.networkId] : [])) } },
        ],
      },
      { fields: ['eui', 'networkId'] },
    );
    const euis = new Set(registered.map((g) => g.eui));
    const ids = new Set(registered.flatMap((g) => (g.networkId ? [g.networkId] : [])));
    return heard.list(
      account.id,
      (g) => (g.eui !== null && euis.has(g.eui)) || (g.networkId !== null && ids.has(g.networkId)),
    );
  }

  /** The connector a gateway may belong to: one of exactly `account`, else 422. */
  async connectorOf(account: Account, id: string, path = '/connectorId'): Promise<Connector> {
    const connector = await this.em().findOne(Connector, { id, account });
    if (!connector) throw configNotAssigned('Connector', id, path);
    return connector;
  }

  private async apply(principal: Principal, gateway: Gateway, input: GatewayInput): Promise<void> {
    if (input.eui !== undefined) {
      const eui = normaliseEui(input.eui);
      if (!EUI.test(eui))
        throw errors.validation('eui must be 16 hexadecimal digits', [
          problem('/eui', 'pattern', { pattern: EUI.source }),
        ]);
      if (eui !== gateway.eui) {
        const taken = await this.em().findOne(Gateway, { account: gateway.account, eui });
        if (taken) {
          throw errors.conflict('GATEWAY_EUI_TAKEN', `A gateway with EUI ${eui} exists in this account`, [
            { ...problem('/eui', 'unique', { value: eui }), eui },
          ]);
        }
      }
      gateway.eui = eui;
    }
    if (!gateway.eui) throw errors.validation('eui is required', [problem('/eui', 'required')]);
    if (input.title !== undefined) gateway.title = input.title.trim();
    if (!gateway.title) gateway.title = gateway.eui;
    if (input.networkId !== undefined) gateway.networkId = input.networkId?.trim() || null;
    if (input.description !== undefined) gateway.description = input.description;
    if (input.tags !== undefined) gateway.tags = [...new Set(input.tags)];
    if (input.offlineAfterSeconds !== undefined) gateway.offlineAfterSeconds = input.offlineAfterSeconds;
    if (input.location !== undefined) setLocation(gateway, input.location);
    if (input.connectorId !== undefined) {
      gateway.connector =
        input.connectorId === null ? null : await this.connectorOf(gateway.account, input.connectorId);
    }
    if (input.permissionScopeId !== undefined) {
      gateway.permissionScope =
        input.permissionScopeId === null
          ? null
          : ((
              await this.permissionScopes.assignable(
                principal,
                gateway.account,
                [input.permissionScopeId],
                (id): AppError => configNotAssigned('Permission scope', id, '/permissionScopeId'),
              )
            )[0] ?? null);
    }
    gateway.updatedAt = this.clock();
  }
}

export function setLocation(gateway: Gateway, location: GatewayLocationInput | null): void {
  gateway.latitude = location?.latitude ?? null;
  gateway.longitude = location?.longitude ?? null;
  gateway.altitude = location?.altitude ?? null;
}
