import type { AccountService } from '../accounts/account.service.js';
import type { AppContext } from '../context.js';
import type { PacketSink } from '../ingest/ingest.types.js';
import type { DialOut } from '../outgoing/dial/dial-out.js';
import { ConnectorOwner } from './connector-owner.js';
import { ConnectorService } from './connector.service.js';
import { ConnectorTelemetry } from './connector-telemetry.js';
import type { KindDeps } from './connector-kind.js';
import { createConnectorKinds } from './kinds/index.js';
import { LinkRuntime } from './links/link-runtime.js';
import { MqttInRuntime } from './mqtt-in.runtime.js';
import { NetworkEvents } from './network-events.js';
import { twinLocations } from '../twins/twin-locations.queries.js';

/**
 * Connectors, wired: the kinds with their runtimes (mqtt-in clients for external brokers, links for
 * field protocols), per-connector telemetry, and the events network servers report. Every runtime
 * stores packets through `packets` and dials out through `dial`.
 */
export function createConnectors(
  ctx: AppContext,
  deps: { accounts: AccountService; packets: PacketSink; dial: DialOut; broker: KindDeps['broker'] },
) {
  // Downlink progress and gateway status from network servers, to the domains that own them.
  const networkEvents = new NetworkEvents((error, event) =>
    ctx.log.warn(
      { err: error, event: event.type, connectorId: event.connectorId },
      'A network-server event was not applied',
    ),
  );
  const connectorTelemetry = new ConnectorTelemetry(ctx.orm, ctx.log, ctx.metrics);
  const databaseUrl = String(ctx.orm.config.get('clientUrl'));
  // Cluster mode: dial-out runtimes run on one node each (ADR 0132).
  const owner = ctx.config.redisUrl ? new ConnectorOwner(databaseUrl, ctx.log) : undefined;
  const mqttIn = new MqttInRuntime({
    orm: ctx.orm,
    sink: deps.packets,
    telemetry: connectorTelemetry,
    secretBox: ctx.secretBox,
    dial: deps.dial,
    log: ctx.log,
    networkEvents,
    cluster: ctx.config.redisUrl ? { databaseUrl, redisUrl: ctx.config.redisUrl } : undefined,
    owner,
  });
  // Field-protocol kinds (WebSocket, weather, LwM2M, IEC 104, OPC UA, Modbus) keep their links here.
  const links = new LinkRuntime({
    orm: ctx.orm,
    sink: deps.packets,
    telemetry: connectorTelemetry,
    secretBox: ctx.secretBox,
    dial: deps.dial,
    log: ctx.log,
    metrics: ctx.metrics,
    owner,
  });
  const connectorKinds = createConnectorKinds({
    links: {
      register: (type, driver) => links.register(type, driver),
      start: (c) => links.startLink(c),
      stop: (id) => links.stopLink(id),
      session: (id) => links.session(id),
    },
    mqttIn: {
      start: (c) => mqttIn.startClient(c),
      stop: (id) => mqttIn.stopClient(id),
      register: (type, reader) => mqttIn.register(type, reader),
      publish: (id, topic, payload) => mqttIn.publish(id, topic, payload),
    },
    broker: deps.broker,
    outgoing: { secretBox: ctx.secretBox, dial: deps.dial, log: ctx.log },
    dataDir: ctx.config.dataDir,
    lwm2m: { ports: ctx.config.lwm2mPorts, bindAddresses: ctx.config.lwm2mBindAddresses },
    weather: {
      twinLocations: (accountId, options) => twinLocations(ctx.orm.em.fork(), accountId, options),
      minIntervalSeconds: ctx.config.weatherMinIntervalSeconds,
    },
  });
  const connectors = new ConnectorService(
    ctx.em,
    ctx.orm,
    deps.accounts,
    connectorKinds,
    connectorTelemetry,
    ctx.secretBox,
    { publicUrl: ctx.config.publicUrl, mqttPort: ctx.config.mqttPort },
  );
  ctx.lifecycle.push(connectorTelemetry, ...(owner ? [owner] : []), mqttIn, links);
  return { networkEvents, connectorTelemetry, mqttIn, links, connectorKinds, connectors };
}
