import { DeviceCacheSubscriber } from './ingest/device-cache.subscriber.js';
import { spoolPositionKey } from './ingest/packet-store.js';
import { PacketSpool } from './ingest/spool/packet-spool.js';
import { createIngest } from './ingest/ingest.module.js';
import { SystemSetting } from './setup/system-setting.entity.js';
import type { AppContext } from './context.js';
import { AccountService } from './accounts/account.service.js';
import { AuditService } from './audit/audit.service.js';
import { AnnouncementService } from './accounts/announcement.service.js';
import { AuthService } from './auth/auth.service.js';
import { FederatedCompletion } from './auth/oidc/federated-completion.service.js';
import { FederatedUserService } from './auth/oidc/federated-user.service.js';
import { LoginStateService } from './auth/oidc/login-state.service.js';
import { OidcService } from './auth/oidc/oidc.service.js';
import { AuthHousekeeping } from './auth/auth-housekeeping.js';
import { LoginThrottleService } from './auth/login-throttle.service.js';
import { SessionService } from './auth/session.service.js';
import { TwoFactorService } from './auth/two-factor.service.js';
import { HealthService } from './health/health.service.js';
import { HeartbeatService } from './health/heartbeat.service.js';
import { RoleService } from './roles/role.service.js';
import { BootstrapService } from './setup/bootstrap.service.js';
import { UserService } from './users/user.service.js';
import { InvitationService } from './users/invitation.service.js';
import { ApiKeyService } from './api-keys/api-key.service.js';
import { PermissionScopeService } from './permission-scopes/permission-scope.service.js';
import { createMailer } from './platform/mail/mailer.js';
import { DeviceDriverService } from './drivers/device-driver.service.js';
import { DriverParsing } from './drivers/driver-parsing.service.js';
import { BrokerService } from './broker/broker.service.js';
import { createCluster, wireCluster } from './cluster/cluster.module.js';
import { WebhookService } from './connectors/webhook.service.js';
import { createConnectors } from './connectors/connectors.module.js';
import { HubDeviceService } from './hub/hub-device.service.js';
import { JobRunner } from './jobs/job.runner.js';
import { JobService } from './jobs/job.service.js';
import { wireBackups } from './backup/backup.schedule.js';
import { DeviceTemplateService } from './templates/device-template.service.js';
import { templateSyncJob } from './templates/template-sync.js';
import { VirtualDeviceService } from './devices/virtual-device.service.js';
import { VirtualDeviceDataService } from './devices/virtual-device-data.service.js';
import { deviceImportJob } from './devices/device-import.js';
import { createTimeSeries } from './timeseries/timeseries.module.js';
import { ActiveDevicesService } from './devices/active-devices.service.js';
import { DashboardService } from './dashboards/dashboard.service.js';
import { DashboardShareService } from './dashboards/dashboard-share.service.js';
import { DigitalTwinService } from './twins/digital-twin.service.js';
import { NominatimGeocoder } from './twins/geocoder.js';
import { TwinStatisticsService } from './twins/twin-statistics.service.js';
import { DataStateService } from './states/data-state.service.js';
import { StateTimers } from './states/engine/state-timers.js';
import { TimeSeriesQueryService } from './timeseries/query/query.service.js';
import { createAlarmsAndRules } from './rules/rules.module.js';
import { createOutgoingAndFlows } from './outgoing/outgoing.module.js';
import { DialOut } from './outgoing/dial/dial-out.js';
import { TargetGuard } from './outgoing/target-guard.js';
import { createDeviceHealth } from './devices/health/device-health.module.js';
import { createGateways } from './gateways/gateways.module.js';
import { OverviewService } from './overview/overview.service.js';
import { createMaps } from './maps/maps.module.js';
import { createDownlinks } from './downlinks/downlinks.module.js';
import { createExports } from './exports/exports.module.js';

/** Every domain service, built once per server; domains call each other only through these. */
export function createServices(ctx: AppContext) {
  // Redis bus, broker backends and cache invalidation across nodes; inert on a single node (ADR 0131).
  const cluster = createCluster(ctx);
  const audit = new AuditService(ctx.em, ctx.clock, ctx.log);
  const accounts = new AccountService(ctx.em, ctx.secretBox, ctx.config.publicUrl, audit, ctx.clock);
  const announcements = new AnnouncementService(ctx.em, accounts);
  const sessions = new SessionService(ctx.em, ctx.clock);
  const loginThrottle = new LoginThrottleService(ctx.em, ctx.clock, { lockMs: ctx.config.loginLockMs });
  const twoFactor = new TwoFactorService(ctx.em, ctx.secretBox, ctx.clock);
  const mailer = createMailer({ smtpUrl: ctx.config.smtpUrl, from: ctx.config.mailFrom, log: ctx.log });
  const roles = new RoleService(ctx.em, accounts, audit);
  const permissionScopes = new PermissionScopeService(ctx.em, accounts);
  const apiKeys = new ApiKeyService(ctx.em, accounts, audit);
  const invitations = new InvitationService({
    em: ctx.em,
    mailer,
    publicUrl: ctx.config.publicUrl,
    log: ctx.log,
    clock: ctx.clock,
  });
  const users = new UserService(ctx.em, { accounts, roles, permissionScopes, invitations, audit });
  const bootstrap = new BootstrapService(ctx.em, accounts, roles, users, ctx.secretBox);
  const auth = new AuthService(ctx.em, ctx.config, ctx.clock, users, sessions, loginThrottle, twoFactor);
  const health = HealthService.fromContext(ctx);
  const heartbeat = HeartbeatService.fromContext(ctx);
  ctx.lifecycle.push(heartbeat);
  ctx.lifecycle.push(new AuthHousekeeping(ctx.orm, ctx.log, sessions, loginThrottle));
  // Every connection to a tenant-set target (connectors, OAuth providers) goes through this door:
  // SSRF protection with STELLWERK_OUTGOING_ALLOW_PRIVATE.
  const dial = new DialOut(new TargetGuard(ctx.config.outgoingAllowPrivate), ctx.log);
  const loginStates = new LoginStateService(ctx.em, ctx.clock);
  const federatedUsers = new FederatedUserService(ctx.em, users, roles, audit);
  const federatedCompletion = new FederatedCompletion(
    ctx.em,
    ctx.clock,
    ctx.config,
    sessions,
    auth,
    federatedUsers,
  );
  const oidc = new OidcService(ctx.config, accounts, loginStates, federatedUsers, federatedCompletion, dial);
  // Every front door appends here: acknowledged once on disk; the ingest worker moves packets into
  // PostgreSQL and processes them (ADR 0103).
  const packets = new PacketSpool({
    dir: ctx.config.spoolDir,
    // The position the ingest worker commits with each batch (a JSON string of the seq).
    readCommittedSeq: async (spoolId) => {
      const row = await ctx.orm.em.fork().findOne(SystemSetting, { key: spoolPositionKey(spoolId) });
      return Number(row?.value ?? 0);
    },
    maxOutstanding: ctx.config.ingestMaxPending,
    // Cluster mode: a PUBACK (or webhook answer) waits for the PostgreSQL commit (ADR 0130).
    acknowledgeAfterCommit: ctx.config.redisUrl !== undefined,
    metrics: ctx.metrics,
    log: ctx.log,
  });
  ctx.lifecycle.push(packets);
  // Connectors: kinds, their runtimes (mqtt-in clients, field-protocol links), telemetry.
  const { networkEvents, connectorTelemetry, mqttIn, links, connectorKinds, connectors } = createConnectors(
    ctx,
    {
      accounts,
      packets,
      dial,
      // Called only once the broker below exists (downlinks are sent after start).
      broker: { publishDownlink: (id, key, payload) => broker.publishDownlink(id, key, payload) },
    },
  );
  const databaseUrl = String(ctx.orm.config.get('clientUrl'));
  const broker = new BrokerService({
    config: ctx.config,
    log: ctx.log,
    metrics: ctx.metrics,
    clock: ctx.clock,
    packets,
    connectors,
    backends: cluster.brokerBackends,
  });
  ctx.lifecycle.push(broker);
  const webhooks = new WebhookService(connectors, packets, networkEvents);
  const hubDevices = new HubDeviceService(ctx.em, packets, (id, result, count) =>
    connectors.recordPackets(id, result, count),
  );
  const driverParsing = new DriverParsing();
  // After the packet store and connector telemetry: stopped before them, so its last batch still lands.
  const { stateEngine, live, ingest } = createIngest(ctx, {
    databaseUrl,
    packets,
    parsing: driverParsing,
    connectors: connectorTelemetry,
    clustered: () => cluster.bus.clustered,
  });
  const stateTimers = new StateTimers({
    engine: stateEngine,
    databaseUrl,
    clock: ctx.clock,
    log: ctx.log,
  });
  ctx.lifecycle.push(stateTimers);
  const jobRunner = new JobRunner({
    orm: ctx.orm,
    log: ctx.log,
    nodeId: ctx.nodeId,
    maxConcurrent: ctx.config.maxConcurrentJobs,
    nodeFaultyAfterMs: ctx.config.nodeFaultyAfterMs,
    metrics: ctx.metrics,
  });
  // Both write devices with plain SQL, past the ORM subscriber: the ingest cache forgets them at the end.
  for (const handler of [templateSyncJob, deviceImportJob]) {
    jobRunner.register({
      ...handler,
      run: async (run) => {
        try {
          return await handler.run(run);
        } finally {
          ingest.invalidateDevice();
          cluster.invalidation.announce('ingest.device');
        }
      },
    });
  }
  ctx.lifecycle.push(jobRunner);
  const jobs = new JobService(ctx.em, accounts, jobRunner);
  wireBackups(ctx, jobRunner, jobs);
  const deviceTemplates = new DeviceTemplateService(ctx.em, accounts, jobs);
  const virtualDevices = new VirtualDeviceService(
    ctx.em,
    accounts,
    permissionScopes,
    deviceTemplates,
    ctx.secretBox,
  );
  const virtualDeviceData = new VirtualDeviceDataService(
    ctx.em,
    accounts,
    virtualDevices,
    jobs,
    ctx.config.packetHistoryLimit,
    driverParsing,
  );
  const drivers = new DeviceDriverService(ctx.em, accounts, driverParsing);
  const activeDevices = new ActiveDevicesService(ctx.em, accounts, ctx.clock);
  const dashboards = new DashboardService(ctx.em, accounts);
  // A rotated or revoked key closes the public views open with it at once.
  const dashboardShares = new DashboardShareService(
    ctx.em,
    dashboards,
    audit,
    () => void live.visibilityChanged(),
  );
  const geocoder = ctx.config.geocoderUrl ? new NominatimGeocoder(ctx.config.geocoderUrl) : null;
  const digitalTwins = new DigitalTwinService(ctx.em, accounts, dashboards, geocoder);
  const twinStatistics = new TwinStatisticsService(ctx.em, accounts);
  const dataStates = new DataStateService(ctx.em, stateEngine, ctx.clock);
  virtualDevices.deletionGuards.push((device) => dataStates.deviceDeletionBlockers(device));
  connectors.deletionGuards.push((connectorId) => dataStates.connectorDeletionBlockers(connectorId));
  digitalTwins.deletionGuards.push((twin) => dataStates.twinDeletionBlockers(twin));
  digitalTwins.routingListeners.push((twinId) => stateEngine.definitionsChanged(twinId));
  // Open live sockets drop what their principal may no longer see (docs/live.md).
  digitalTwins.visibilityListeners.push(() => void live.visibilityChanged());
  virtualDevices.visibilityListeners.push(() => void live.visibilityChanged());
  // Writer, partitions and retention: outbox → every configured target (docs/timeseries.md).
  const timeseries = createTimeSeries({
    databaseUrl,
    targets: ctx.config.timeseriesTargets,
    metrics: ctx.metrics,
    log: ctx.log,
    clock: ctx.clock,
  });
  // Queries are pushed down as SQL while PostgreSQL serves reads, else evaluated over the serving target's points.
  const timeseriesQuery = new TimeSeriesQueryService(ctx.em, accounts, ctx.clock, timeseries.store, {
    reader: timeseries.reader,
  });
  ctx.lifecycle.push(timeseries.runtime);
  ctx.orm.em.getEventManager().registerSubscriber(new DeviceCacheSubscriber(ingest));
  // Downlinks: queued per device, delivered by the connector's kind, moved on by network-server events.
  const downlinkParts = createDownlinks(ctx, {
    virtualDevices,
    connectorKinds,
    driverParsing,
    networkEvents,
  });
  // Alarm log, smart groups and reports, connector monitoring, rules.
  const alarmsAndRules = createAlarmsAndRules(ctx, {
    accounts,
    connectors,
    digitalTwins,
    stateEngine,
    isClientConnected: (id) => mqttIn.isReady(id) || links.isConnected(id),
    brokerClients: (id) => broker.clientCount(id),
    downlinks: downlinkParts.downlinks,
  });
  // Outgoing connectors and integration flows; rules send through the same dispatcher.
  const outgoingAndFlows = createOutgoingAndFlows(ctx, {
    accounts,
    connectors,
    connectorKinds,
    connectorTelemetry,
    ingest: ingest as never,
    dial,
    alarmEntries: alarmsAndRules.alarmLogs,
  });
  alarmsAndRules.outgoing.use(outgoingAndFlows.outgoingDispatcher);
  // Consoles following alarms hear of each committed change (docs/live.md).
  alarmsAndRules.alarmLogs.onChanged((entries) => void live.publishAlarms(entries));
  // Export plans: the resource, `export` jobs, their schedule and e-mails (docs/exports.md).
  const exportParts = createExports(ctx, {
    accounts,
    audit,
    connectors,
    jobs,
    jobRunner,
    reads: timeseries.store,
    query: timeseriesQuery,
    outgoing: outgoingAndFlows.outgoingDispatcher,
  });
  // Device health: default rules in each device's daily slot, own rules on their schedule, Unknown devices promptly.
  const deviceHealthParts = createDeviceHealth(ctx, {
    virtualDevices,
    alarms: alarmsAndRules.alarmLogs,
    ingest: ingest as never,
  });
  // LoRaWAN gateways: status from uplinks and network servers, offline alarms through connector monitoring.
  const gatewayParts = createGateways(ctx, {
    accounts,
    permissionScopes,
    connectors,
    ingest,
    networkEvents,
    dial,
    monitoring: alarmsAndRules.monitoringEvaluator,
  });
  const overview = new OverviewService(
    ctx.em,
    accounts,
    virtualDevices,
    alarmsAndRules.alarmLogs,
    gatewayParts.gateways,
    ctx.clock,
  );
  wireCluster(ctx, cluster, {
    live,
    ingest,
    stateEngine,
    alarmLogs: alarmsAndRules.alarmLogs,
    connectors,
    flowRunner: outgoingAndFlows.flowRunner,
  });
  return {
    overview,
    ...createMaps(ctx, { accounts, audit }),
    ...downlinkParts,
    ...alarmsAndRules,
    ...gatewayParts,
    ...outgoingAndFlows,
    ...deviceHealthParts,
    ...exportParts,
    packets,
    driverParsing,
    drivers,
    broker,
    jobs,
    deviceTemplates,
    virtualDevices,
    virtualDeviceData,
    activeDevices,
    dashboards,
    dashboardShares,
    digitalTwins,
    twinStatistics,
    dataStates,
    timeseriesQuery,
    ingest,
    stateEngine,
    stateTimers,
    timeseries,
    live,
    connectors,
    connectorTelemetry,
    mqttIn,
    links,
    webhooks,
    networkEvents,
    hubDevices,
    audit,
    accounts,
    announcements,
    sessions,
    roles,
    users,
    mailer,
    permissionScopes,
    apiKeys,
    invitations,
    bootstrap,
    auth,
    loginThrottle,
    twoFactor,
    health,
    heartbeat,
    oidc,
    federatedCompletion,
  };
}

export type Services = ReturnType<typeof createServices>;
