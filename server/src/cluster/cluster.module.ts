import type { EventSubscriber, FlushEventArgs } from '@mikro-orm/core';
import type { AppContext } from '../context.js';
import { DeviceCacheSubscriber, type DeviceCacheInvalidation } from '../ingest/device-cache.subscriber.js';
import type { AlarmEntry } from '../integration/ports.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { StateChange } from '../states/engine/state-work.js';
import { redisBrokerBackends, type BrokerBackends } from './broker-backends.js';
import { ClusterBusMetrics, LocalClusterBus, RedisClusterBus, type ClusterBus } from './cluster-bus.js';
import { ClusterInvalidation } from './cluster-invalidation.js';
import { wireClusterLive, type LiveSink } from './cluster-live.js';

type DeviceRef = Parameters<DeviceCacheInvalidation['invalidateDevice']>[0];

export interface Cluster {
  bus: ClusterBus;
  invalidation: ClusterInvalidation;
  /** For BrokerService: Aedes' emitter and persistence in Redis; undefined on a single node. */
  brokerBackends: (() => BrokerBackends) | undefined;
}

/**
 * The cluster bus (ADR 0131): Redis pub/sub when `STELLWERK_REDIS_URL` is set, else the single-node
 * bus that tells no one. Started before and stopped after every other part but the database, so they
 * can publish from start to stop.
 */
export function createCluster(ctx: AppContext): Cluster {
  const url = ctx.config.redisUrl;
  const counters = new ClusterBusMetrics(ctx.metrics);
  if (url === undefined) {
    const bus = new LocalClusterBus();
    return { bus, invalidation: new ClusterInvalidation(bus), brokerBackends: undefined };
  }
  const bus = new RedisClusterBus({ url, nodeId: ctx.nodeId, log: ctx.log, counters });
  const invalidation = new ClusterInvalidation(bus);
  // Invalidations published while this node was cut off never reach it: it forgets everything.
  bus.onReconnect(() => invalidation.dropAll());
  const part: Lifecycle = {
    name: 'cluster-bus',
    start: async () => {
      try {
        await bus.start();
      } catch (error) {
        // Not fatal: the bus keeps reconnecting, and the node serves meanwhile as far as it can alone.
        ctx.log.error({ err: error }, 'Cluster bus: Redis is not reachable yet; retrying in the background');
      }
    },
    stop: () => bus.close(),
  };
  // Right after the database, which stays first to start and last to stop.
  ctx.lifecycle.splice(1, 0, part);
  return { bus, invalidation, brokerBackends: () => redisBrokerBackends(url) };
}

/** The parts whose caches and live updates span nodes. */
export interface ClusterParts {
  live: LiveSink & { visibilityChanged(): Promise<void> };
  ingest: DeviceCacheInvalidation & {
    onVisibleEntries(listener: (deviceIds: string[], entries: string[]) => void): void;
  };
  stateEngine: {
    definitionsChanged(twinId?: string): void;
    onStateChanges(listener: (changes: StateChange[]) => void): void;
    onDefinitionsChanged(listener: () => void): void;
  };
  alarmLogs: { onChanged(listener: (entries: AlarmEntry[]) => void): void };
  connectors: {
    onDeactivated(listener: (connectorId: string) => void): void;
    deactivatedOnAnotherNode(connectorId: string): void;
  };
  flowRunner: { invalidate(accountId: string): void };
}

/**
 * Registers every in-memory cache of database data with the cluster invalidation and the live fanout
 * with the bus. A no-op on a single node. Other caches need none: sessions, API keys, users, roles and
 * permission scopes are read from PostgreSQL per request; compiled drivers are keyed by the driver's
 * `updatedAt`.
 */
export function wireCluster(ctx: AppContext, cluster: Cluster, parts: ClusterParts): void {
  const { bus, invalidation } = cluster;
  if (!bus.clustered) return;
  wireClusterLive(
    bus,
    {
      onVisibleEntries: (l) => parts.ingest.onVisibleEntries(l),
      onStateChanges: (l) => parts.stateEngine.onStateChanges(l),
      onAlarmsChanged: (l) => parts.alarmLogs.onChanged(l),
    },
    parts.live,
  );

  // The ingest resolvers' device, driver and connector caches (main thread and worker).
  const ingest = parts.ingest;
  const device = invalidation.register<DeviceRef>('ingest.device', {
    apply: (d) => ingest.invalidateDevice(d),
  });
  const driver = invalidation.register<string>('ingest.driver', {
    apply: (id) => (id === undefined ? ingest.invalidateDevice() : ingest.invalidateDriver(id)),
  });
  const connector = invalidation.register<string>('ingest.connector', {
    apply: (id) => (id === undefined ? ingest.invalidateDevice() : ingest.invalidateConnector(id)),
  });
  const announcer = new CommitAnnouncer({
    invalidateDevice: (d) => announcer.queue(() => device(d ?? undefined)),
    invalidateDriver: (id) => announcer.queue(() => driver(id)),
    invalidateConnector: (id) => announcer.queue(() => connector(id)),
  });
  const events = ctx.orm.em.getEventManager();
  events.registerSubscriber(new DeviceCacheSubscriber(announcer.target));
  events.registerSubscriber(announcer);

  // State definitions: every change already ends in definitionsChanged, whose listeners tell the others.
  const definitions = invalidation.register<string>('states.definitions', {
    apply: (twinId) => parts.stateEngine.definitionsChanged(twinId),
  });
  parts.stateEngine.onDefinitionsChanged(() => definitions());

  // Connector deactivated, deleted or re-keyed: its broker clients, cached logins and outgoing lanes go on every node.
  const deactivated = invalidation.register<string>('connectors.deactivated', {
    apply: (id) => {
      if (id !== undefined) parts.connectors.deactivatedOnAnotherNode(id);
    },
  });
  parts.connectors.onDeactivated((id) => deactivated(id));

  // Open live sockets re-check what their principals may see (shares, twins, devices, scopes).
  const live = parts.live;
  const localVisibility = live.visibilityChanged.bind(live);
  const visibility = invalidation.register<undefined>('live.visibility', {
    apply: () => void localVisibility(),
  });
  // Wrapped on the instance: every caller (services, shares, twins, devices) then reaches the other nodes too.
  live.visibilityChanged = () => {
    visibility();
    return localVisibility();
  };

  const flowRunner = parts.flowRunner;
  const localFlows = flowRunner.invalidate.bind(flowRunner);
  const flows = invalidation.register<string>('flows.account', {
    apply: (accountId) => {
      if (accountId !== undefined) localFlows(accountId);
    },
  });
  flowRunner.invalidate = (accountId) => {
    localFlows(accountId);
    flows(accountId);
  };
}

/**
 * Holds the ORM subscriber's invalidations until the write committed: another node told before the
 * commit could reload the old row and keep it. Plain flushes commit before `afterFlush`; inside an
 * explicit transaction the announcement waits for its commit.
 */
class CommitAnnouncer implements EventSubscriber {
  private pending: Array<() => void> = [];

  constructor(readonly target: DeviceCacheInvalidation) {}

  queue(announce: () => void): void {
    this.pending.push(announce);
  }

  afterFlush(args: FlushEventArgs): void {
    if (!args.em.isInTransaction()) this.release();
  }

  afterTransactionCommit(): void {
    this.release();
  }

  private release(): void {
    const pending = this.pending;
    this.pending = [];
    for (const announce of pending) announce();
  }
}
