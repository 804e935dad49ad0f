import type { EntityManager, FilterQuery, MikroORM } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { isDatabaseUnavailable } from '../platform/db/database-availability.js';
import { randomToken, safeEqual, sha256 } from '../platform/crypto/tokens.js';
import { errors } from '../platform/errors.js';
import { likePattern, listResult, type ListParams, type ListResult } from '../platform/http/list.js';
import { problem } from '../platform/http/problem-detail.js';
import type { ConnectorKind } from './connector-kind.js';
import { BrokerLogins } from './broker-logins.js';
import { Connector, ConnectorLog, type ConnectorLogLevel } from './connector.entity.js';
import { LOG_KEEP, type ConnectorTelemetry, type PacketResult } from './connector-telemetry.js';
import { kindTypesWhere, type ConnectorKinds } from './kinds/index.js';

export const CONNECTOR_SORTABLE = ['title', 'type', 'createdAt', 'updatedAt', 'lastPacketAt'] as const;

export interface ConnectorInput {
  title?: string;
  description?: string;
  config?: Record<string, unknown>;
}

export interface ConnectorCreateInput extends ConnectorInput {
  type: string;
  active?: boolean;
  accountId?: string;
}

/** Clear credentials: returned once (creation, rotation), never stored. */
export interface IssuedCredentials {
  username?: string;
  password?: string;
  apiEndpoint?: string;
}

export type DeactivationListener = (connectorId: string) => void;

/** What the broker learns about the connector a client logs in with. */
export interface BrokerLogin {
  id: string;
  config: Record<string, unknown>;
  /** Its account's path: ids from the top-level account down to its own. */
  account: { path: string[] };
}

const BROKER_LOGIN_SQL = `
  SELECT c.id, c.config, c.broker_password_hash AS hash, a.path
    FROM connectors c JOIN accounts a ON a.id = c.account_id
   WHERE c.broker_username = ? AND c.type IN (?) AND c.active`;

/** Kinds whose devices log in to the embedded broker. */
const BROKER_KIND_TYPES = kindTypesWhere((k) => k.capabilities.includes('broker'));

/** Something that may refuse a connector deletion (twin states fed through it); returns blockers. */
export type ConnectorDeletionGuard = (connectorId: string) => Promise<unknown[]>;

/**
 * Connectors of an account and what every front door needs from them: credential checks, the
 * connector log and packet counters. Callers have checked the route permission; tenancy is
 * checked here. Secrets: broker passwords are stored as SHA-256 (256-bit random), webhook tokens
 * sealed (the URL is shown again) plus SHA-256 for the lookup, kind secrets sealed in `config`.
 */
export class ConnectorService {
  private readonly deactivationListeners: DeactivationListener[] = [];
  private readonly brokerLogins = new BrokerLogins<BrokerLogin>();
  /** Extension point: data states register a guard so a connector linked to a twin is not deleted. */
  readonly deletionGuards: ConnectorDeletionGuard[] = [];

  constructor(
    private readonly em: () => EntityManager,
    private readonly orm: MikroORM,
    private readonly accounts: AccountService,
    private readonly kinds: ConnectorKinds,
    private readonly telemetry: ConnectorTelemetry,
    private readonly secretBox: SecretBox,
    private readonly urls: { publicUrl: string; mqttPort: number },
  ) {}

  kind(type: string): ConnectorKind {
    const kind = this.kinds.get(type);
    if (!kind)
      throw errors.validation(`Unknown connector type "${type}"`, [
        problem('/type', 'enum', { allowedValues: [...this.kinds.keys()] }),
      ]);
    return kind;
  }

  async list(
    principal: Principal,
    params: ListParams,
    filter: { accountId?: string; type?: string; active?: boolean },
  ): Promise<ListResult<Connector>> {
    const account = await this.accounts.actingAccount(principal, filter.accountId);
    const where: FilterQuery<Connector> = { account };
    if (filter.type) where.type = filter.type;
    if (filter.active !== undefined) where.active = filter.active;
    if (params.search) where.title = { $ilike: likePattern(params.search) };
    const [rows, total] = await this.em().findAndCount(Connector, where, {
      orderBy: [...params.orderBy.map((o) => ({ [o.field]: o.direction })), { id: 'asc' }],
      limit: params.pageSize,
      offset: params.offset,
    });
    return listResult(rows, total, params);
  }

  async get(principal: Principal, id: string): Promise<Connector> {
    const connector = await this.em().findOne(Connector, { id }, { populate: ['account'] });
    if (!connector || !canReach(principal, connector.account)) throw errors.notFound('Connector', id);
    return connector;
  }

  async create(
    principal: Principal,
    input: ConnectorCreateInput,
  ): Promise<{ connector: Connector; credentials: IssuedCredentials | null }> {
    const kind = this.kind(input.type);
    const account = await this.accounts.actingAccount(principal, input.accountId);
    const connector = new Connector();
    connector.account = account;
    connector.type = kind.type;
    connector.active = input.active ?? true;
    this.apply(connector, kind, {
      title: input.title,
      description: input.description,
      config: input.config ?? {},
    });
    const credentials = this.issueCredentials(connector, kind);
    await this.em().persistAndFlush(connector);
    if (connector.active) await kind.start?.(connector);
    return { connector, credentials };
  }

  async update(principal: Principal, id: string, input: ConnectorInput): Promise<Connector> {
    const connector = await this.get(principal, id);
    const kind = this.kind(connector.type);
    this.apply(connector, kind, input);
    await this.em().flush();
    // New settings (broker URL, topics, certificates) take effect with a fresh client.
    if (input.config !== undefined && connector.active && kind.start) {
      await kind.stop?.(connector.id);
      await kind.start(connector);
    }
    return connector;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const connector = await this.get(principal, id);
    const devices = await this.em().find(
      VirtualDevice,
      { connector: connector.id },
      { fields: ['id', 'title'], limit: 20, orderBy: { title: 'asc' } },
    );
    if (devices.length > 0) {
      throw errors.deleteBlocked(
        'The connector is linked to devices',
        devices.map((d) => ({ type: 'virtualDevice', id: d.id, title: d.title })),
      );
    }
    const blockers = (await Promise.all(this.deletionGuards.map((guard) => guard(connector.id)))).flat();
    if (blockers.length > 0)
      throw errors.deleteBlocked('The connector is in use; details name what uses it', blockers);
    await this.kind(connector.type).stop?.(connector.id);
    await this.em().removeAndFlush(connector);
    this.notifyDeactivated(connector.id);
  }

  async setActive(principal: Principal, id: string, active: boolean): Promise<Connector> {
    const connector = await this.get(principal, id);
    if (connector.active === active) return connector;
    const kind = this.kind(connector.type);
    connector.active = active;
    await this.em().flush();
    if (active) {
      await kind.start?.(connector);
      await this.log(connector.id, 'info', 'Connector activated');
    } else {
      await kind.stop?.(connector.id);
      this.notifyDeactivated(connector.id);
      await this.log(connector.id, 'info', 'Connector deactivated');
    }
    return connector;
  }

  /** New broker password or webhook URL; the old one stops working at once. */
  async rotateCredentials(
    principal: Principal,
    id: string,
  ): Promise<{ connector: Connector; credentials: IssuedCredentials }> {
    const connector = await this.get(principal, id);
    const credentials = this.issueCredentials(connector, this.kind(connector.type));
    if (!credentials) {
      throw errors.unprocessable('NO_CREDENTIALS', `A ${connector.type} connector has no issued credentials`);
    }
    await this.em().flush();
    if (credentials.password) this.notifyDeactivated(connector.id);
    await this.log(connector.id, 'info', 'Credentials rotated');
    return { connector, credentials };
  }

  async logs(principal: Principal, id: string, limit = LOG_KEEP): Promise<ConnectorLog[]> {
    const connector = await this.get(principal, id);
    return this.em().find(
      ConnectorLog,
      { connector: connector.id },
      { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: Math.min(limit, LOG_KEEP) },
    );
  }

  /** Writes a connector log entry (used by every front door); never throws. */
  log(connectorId: string, level: ConnectorLogLevel, message: string, details: Record<string, unknown> = {}) {
    return this.telemetry.write(connectorId, level, message, details);
  }

  /** Counts packets: `in` once durably stored, `failed` when refused. Batched, see ConnectorTelemetry. */
  recordPackets(connectorId: string, result: PacketResult, count = 1): void {
    this.telemetry.record(connectorId, result, count);
  }

  /**
   * The embedded broker's CONNECT check: an active `mqtt-broker` connector with this username and
   * password (with its settings and its account's path), or null. The hash comparison is
   * constant-time; an unknown user still hashes. While the database cannot be reached, a login
   * this node verified recently is honoured (BrokerLogins).
   */
  async authenticateBroker(
    username: string,
    password: string,
    wrongPassword?: (connectorId: string) => void,
  ): Promise<BrokerLogin | null> {
    const hash = sha256(password);
    // Plain SQL, not the ORM: it runs on every CONNECT, and entity hydration cost about three times
    // the rest of a CONNECT (a flood of them is CPU the other tenants' packets need).
    let rows: Array<{ id: string; config: Record<string, unknown>; hash: string | null; path: string[] }>;
    try {
      rows = await this.orm.em
        .getConnection()
        .execute<Array<{ id: string; config: Record<string, unknown>; hash: string | null; path: string[] }>>(
          BROKER_LOGIN_SQL,
          [username, BROKER_KIND_TYPES],
        );
    } catch (error) {
      const remembered = isDatabaseUnavailable(error) ? this.brokerLogins.whileOffline(username, hash) : null;
      if (remembered) return remembered;
      throw error;
    }
    const row = rows[0];
    // Compared for an unknown user too, so timing does not tell known usernames apart.
    if (!safeEqual(hash, row?.hash ?? '0'.repeat(64)) || !row) {
      this.brokerLogins.refused(username);
      if (row) wrongPassword?.(row.id);
      return null;
    }
    const login: BrokerLogin = { id: row.id, config: row.config, account: { path: row.path } };
    this.brokerLogins.verified(username, hash, login);
    return login;
  }

  /** Live clients of this connector must go: deactivated, deleted, or password rotated. */
  onDeactivated(listener: DeactivationListener): void {
    this.deactivationListeners.push(listener);
  }

  /** The webhook connector behind a URL token (any state; the caller checks `active`). */
  findByWebhookToken(token: string): Promise<Connector | null> {
    return this.em().findOne(Connector, { webhookTokenHash: sha256(token) });
  }

  apiEndpoint(connector: Connector): string | null {
    const kind = this.kinds.get(connector.type);
    if (kind?.capabilities.includes('webhook') && connector.webhookTokenSealed) {
      return this.webhookUrl(this.secretBox.open(connector.webhookTokenSealed));
    }
    if (kind?.capabilities.includes('broker')) {
      return `mqtt://${new URL(this.urls.publicUrl).hostname}:${this.urls.mqttPort}`;
    }
    return typeof connector.config.url === 'string' ? connector.config.url : null;
  }

  publicConfig(connector: Connector): Record<string, unknown> {
    return this.kinds.get(connector.type)?.publicConfig?.(connector.config) ?? connector.config;
  }

  capabilities(connector: Connector): readonly string[] {
    return this.kinds.get(connector.type)?.capabilities ?? [];
  }

  /** Stored counters plus what this node counted since the last flush. */
  counters(connector: Connector): { packetsIn: number; packetsFailed: number; lastPacketAt: Date | null } {
    const pending = this.telemetry.unflushed(connector.id);
    const last = [connector.lastPacketAt, pending?.last ?? null].filter((d): d is Date => d !== null);
    return {
      packetsIn: Number(connector.packetsIn) + (pending?.in ?? 0),
      packetsFailed: Number(connector.packetsFailed) + (pending?.failed ?? 0),
      lastPacketAt: last.length ? new Date(Math.max(...last.map((d) => new Date(d).getTime()))) : null,
    };
  }

  private webhookUrl(token: string): string {
    return `${this.urls.publicUrl.replace(/\/+$/, '')}/xapi/v1/webhooks/${token}`;
  }

  private issueCredentials(connector: Connector, kind: ConnectorKind): IssuedCredentials | null {
    if (kind.capabilities.includes('broker')) {
      connector.brokerUsername ??= `c-${connector.id.replace(/-/g, '').slice(-16)}`;
      const password = randomToken(32);
      connector.brokerPasswordHash = sha256(password);
      return { username: connector.brokerUsername, password };
    }
    if (kind.capabilities.includes('webhook')) {
      const token = randomToken(32);
      connector.webhookTokenSealed = this.secretBox.seal(token);
      connector.webhookTokenHash = sha256(token);
      return { apiEndpoint: this.webhookUrl(token) };
    }
    return null;
  }

  private apply(connector: Connector, kind: ConnectorKind, input: ConnectorInput): void {
    if (input.title !== undefined) {
      const title = input.title.trim();
      if (!title)
        throw errors.validation('title must not be empty', [problem('/title', 'minLength', { limit: 1 })]);
      connector.title = title;
    }
    if (!connector.title) throw errors.validation('title is required', [problem('/title', 'required')]);
    if (input.description !== undefined) connector.description = input.description;
    if (input.config !== undefined) {
      const problems = kind.validate(input.config);
      if (problems.length > 0) {
        throw errors.validation(
          `Invalid ${kind.type} settings: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
          problems,
        );
      }
      connector.config =
        kind.prepareConfig?.(input.config, connector.config, { secretBox: this.secretBox }) ?? input.config;
    }
  }

  /** Another node deactivated, deleted or re-keyed this connector: its clients here must go too. */
  deactivatedOnAnotherNode(connectorId: string): void {
    this.notifyDeactivated(connectorId);
  }

  private notifyDeactivated(connectorId: string): void {
    this.brokerLogins.forgetConnector(connectorId);
    for (const listener of this.deactivationListeners) {
      try {
        listener(connectorId);
      } catch {
        // A listener (the broker) failing must not undo the deactivation that already committed.
      }
    }
  }
}
