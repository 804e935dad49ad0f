/**
 * The broker's authenticated clients, counted per connector and per account, with the connection
 * limits that keep one tenant from taking every connection the server can hold. All of it is
 * per-connection work at CONNECT and at close; nothing here runs per packet.
 *
 * - A connector may hold `maxConnections` (its own setting) or `perConnector` clients.
 * - An account may hold `perAccount` clients across the connectors of its whole subtree, so
 *   creating sub-accounts does not multiply the limit. The top-level account is exempt: its subtree
 *   is the whole instance, which the broker's connection cap (connection-cap.ts) bounds.
 * - A connection that replaces a live client with the same id in the same connector (MQTT takeover)
 *   is always admitted: the count does not grow once the old one has closed.
 */

export interface ConnectionLimits {
  perConnector: number;
  perAccount: number;
}

export interface LimitedConnector {
  id: string;
  /** Account ids from the top-level account down to the connector's own. */
  accountPath: readonly string[];
  /** The connector's own limit (its `maxConnections` setting), replacing `perConnector`. */
  maxConnections: number | undefined;
}

export interface LimitRefusal {
  scope: 'connector' | 'account';
  limit: number;
}

export class LiveClients<C extends { closed: boolean }> {
  private readonly byConnector = new Map<string, Set<C>>();
  private readonly byAccount = new Map<string, number>();
  /** `{connectorId}/{clientId}` → the client holding it: takeovers are admitted at the limit. */
  private readonly byKey = new Map<string, C>();
  private readonly entries = new WeakMap<C, { connector: LimitedConnector; key: string }>();
  private total = 0;

  constructor(private readonly limits: ConnectionLimits) {}

  get size(): number {
    return this.total;
  }

  count(connectorId: string): number {
    return this.byConnector.get(connectorId)?.size ?? 0;
  }

  of(connectorId: string): C[] {
    return [...(this.byConnector.get(connectorId) ?? [])];
  }

  /**
   * Counts `client` under `key` until `release(client)`, or says which limit it would exceed (and
   * counts nothing).
   */
  admit(client: C, key: string, connector: LimitedConnector): LimitRefusal | null {
    const holder = this.byKey.get(key);
    const replacing = holder !== undefined && holder !== client && !holder.closed;
    if (!replacing) {
      const refusal = this.check(connector);
      if (refusal) return refusal;
    }
    let clients = this.byConnector.get(connector.id);
    if (!clients) this.byConnector.set(connector.id, (clients = new Set()));
    clients.add(client);
    for (const accountId of limitedAccounts(connector))
      this.byAccount.set(accountId, (this.byAccount.get(accountId) ?? 0) + 1);
    this.byKey.set(key, client);
    this.entries.set(client, { connector, key });
    this.total++;
    return null;
  }

  release(client: C): void {
    const entry = this.entries.get(client);
    if (!entry) return;
    this.entries.delete(client);
    const { connector, key } = entry;
    const clients = this.byConnector.get(connector.id);
    clients?.delete(client);
    if (clients?.size === 0) this.byConnector.delete(connector.id);
    for (const accountId of limitedAccounts(connector)) {
      const left = (this.byAccount.get(accountId) ?? 1) - 1;
      if (left > 0) this.byAccount.set(accountId, left);
      else this.byAccount.delete(accountId);
    }
    if (this.byKey.get(key) === client) this.byKey.delete(key);
    this.total--;
  }

  private check(connector: LimitedConnector): LimitRefusal | null {
    const connectorLimit = connector.maxConnections ?? this.limits.perConnector;
    if (this.count(connector.id) >= connectorLimit) return { scope: 'connector', limit: connectorLimit };
    for (const accountId of limitedAccounts(connector)) {
      if ((this.byAccount.get(accountId) ?? 0) >= this.limits.perAccount)
        return { scope: 'account', limit: this.limits.perAccount };
    }
    return null;
  }
}

/** Every account on the connector's path but the top-level one. */
const limitedAccounts = (connector: LimitedConnector): readonly string[] => connector.accountPath.slice(1);
