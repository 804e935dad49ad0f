import type { AccountService } from '../accounts/account.service.js';
import type { ConnectorMonitoringEvaluator } from '../connector-monitoring/connector-monitoring.evaluator.js';
import type { ConnectorService } from '../connectors/connector.service.js';
import type { NetworkEvents } from '../connectors/network-events.js';
import type { AppContext } from '../context.js';
import type { ProcessedListener } from '../ingest/pipeline.js';
import type { DialOut } from '../outgoing/dial/dial-out.js';
import type { PermissionScopeService } from '../permission-scopes/permission-scope.service.js';
import { LeaderTimer } from '../platform/leader-timer.js';
import { GatewayLists } from './gateway-import.js';
import { GatewayImportService } from './gateway-import.service.js';
import { GatewayReceptions } from './gateway-receptions.js';
import { GatewayStatusKeeper } from './gateway-status.js';
import { GatewayService } from './gateway.service.js';

export const GATEWAY_STATUS_LOCK = 0x4757_5354; // "GWST"
/** Status rounds: a gateway goes offline within this much after its window ends. */
const ROUND_MS = 30_000;

/**
 * LoRaWAN gateways, wired: receptions from the ingest pipeline's processed updates
 * (`_meta.gateways`), status from network-server events, the offline round on one node (leader
 * timer), gateway-offline alarms through connector monitoring, the import from network servers.
 */
export function createGateways(
  ctx: AppContext,
  deps: {
    accounts: AccountService;
    permissionScopes: PermissionScopeService;
    connectors: ConnectorService;
    ingest: { onProcessed(listener: ProcessedListener): void };
    networkEvents: NetworkEvents;
    dial: DialOut;
    monitoring: Pick<ConnectorMonitoringEvaluator, 'gatewayWentOffline'>;
  },
) {
  const gateways = new GatewayService(ctx.em, deps.accounts, deps.permissionScopes, ctx.clock);
  const gatewayImport = new GatewayImportService(
    ctx.em,
    deps.connectors,
    new GatewayLists(deps.dial, ctx.secretBox),
    ctx.clock,
  );
  const gatewayReceptions = new GatewayReceptions(ctx.orm, ctx.log);
  deps.ingest.onProcessed(gatewayReceptions.offer);
  const gatewayStatus = new GatewayStatusKeeper({
    orm: ctx.orm,
    log: ctx.log,
    offlineAfterSeconds: ctx.config.gatewayOfflineAfterSeconds,
    figuresDays: ctx.config.gatewayFiguresDays,
  });
  gatewayStatus.onOffline((gateway, now) => deps.monitoring.gatewayWentOffline(gateway, now));
  deps.networkEvents.onGateway(gatewayStatus.apply);
  const gatewayStatusTimer = new LeaderTimer('gateway-status', {
    databaseUrl: String(ctx.orm.config.get('clientUrl')),
    lockKey: GATEWAY_STATUS_LOCK,
    everyMs: ROUND_MS,
    clock: ctx.clock,
    log: ctx.log,
    round: (now) => gatewayStatus.round(now),
  });
  ctx.lifecycle.push(gatewayReceptions, gatewayStatusTimer);
  return { gateways, gatewayImport, gatewayReceptions, gatewayStatus, gatewayStatusTimer };
}
