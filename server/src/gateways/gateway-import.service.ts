import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../auth/principal.js';
import type { ConnectorService } from '../connectors/connector.service.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { errors } from '../platform/errors.js';
import { Gateway } from './gateway.entity.js';
import { canImportGateways, type GatewayLists } from './gateway-import.js';
import { setLocation } from './gateway.service.js';

export interface GatewayImportResult {
  connectorId: string;
  created: number;
  updated: number;
  skipped: Array<{ id: string; reason: string }>;
}

/**
 * Imports a network-server connector's gateway list into the connector's account. Callers have
 * checked gateway.manage; the connector must be reachable (connectors.get). A gateway already
 * there (same EUI) keeps its tags, scope, description and own settings, and takes the network
 * server's name, id, location and the connector; a new one gets the restricted caller's first scope,
 * like a gateway made through the API. Gateways hidden from a restricted caller are not touched.
 */
export class GatewayImportService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly connectors: ConnectorService,
    private readonly lists: GatewayLists,
    private readonly clock: () => Date,
  ) {}

  async importFrom(principal: Principal, connectorId: string): Promise<GatewayImportResult> {
    const connector = await this.connectors.get(principal, connectorId);
    if (!canImportGateways(connector.type)) {
      throw errors.unprocessable(
        'GATEWAY_IMPORT_UNSUPPORTED',
        `Connector ${connector.id} is a ${connector.type} connector; gateways are imported from The Things Stack or ChirpStack connectors`,
        [{ path: '/connectorId', type: connector.type }],
      );
    }
    const remote = await this.lists.list(connector);
    const em = this.em();
    const scope = scopeFilter(principal);
    const existing = await em.find(Gateway, {
      account: connector.account,
      eui: { $in: remote.gateways.map((g) => g.eui) },
    });
    const byEui = new Map(existing.map((g) => [g.eui, g]));
    const result: GatewayImportResult = {
      connectorId: connector.id,
      created: 0,
      updated: 0,
      skipped: remote.skipped,
    };
    const now = this.clock();
    for (const r of remote.gateways) {
      let gateway = byEui.get(r.eui);
      if (gateway && !scope.allows(gateway.permissionScope?.id)) {
        result.skipped.push({
          id: r.networkId ?? r.eui,
          reason: 'a gateway with this EUI is outside your scopes',
        });
        continue;
      }
      if (!gateway) {
        gateway = new Gateway();
        gateway.account = connector.account;
        gateway.eui = r.eui;
        gateway.description = r.description;
        gateway.createdAt = now;
        const firstScope = scope.scopeIds[0];
        if (firstScope) gateway.permissionScope = em.getReference(PermissionScope, firstScope);
        em.persist(gateway);
        byEui.set(r.eui, gateway);
        result.created += 1;
      } else result.updated += 1;
      gateway.title = r.title.slice(0, 200);
      gateway.networkId = r.networkId?.slice(0, 100) ?? gateway.networkId;
      gateway.connector = connector;
      if (r.location) setLocation(gateway, r.location);
      gateway.updatedAt = now;
    }
    await em.flush();
    return result;
  }
}
