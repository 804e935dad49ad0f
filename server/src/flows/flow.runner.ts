import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { StateUpdate } from '../ingest/parse-packet.stage.js';
import { entryVisibleWithin } from '../alarms/alarm-visibility.js';
import type { AlarmEntry, AlarmEntryEvents, OutgoingDispatch } from '../integration/ports.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { newId } from '../platform/crypto/ids.js';
import { safeErrorMessage } from '../platform/db/database-errors.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import type { Metrics } from '../platform/metrics.js';
import { executeSteps, type LoadedFlow, type LoadedStep } from './flow-execution.js';
import { FlowFilter, FlowTransformer, IntegrationFlow, type FlowRunOutcome } from './flow.entities.js';
import type { FlowScripts } from './flow-scripts.js';

/**
 * Runs integration flows on packets (after their batch committed) and on alarm log entries.
 *
 * Failure behaviour: the ingest pipeline's listener only checks a set and pushes onto a bounded
 * queue (MAX_QUEUED), so flows never slow ingestion; when the queue is full new items are dropped
 * and counted (`stellwerk_flow_items_dropped_total`). One worker runs the items in order. A flow
 * that fails records the failure in its runs and the next item goes on. Runs are kept in memory
 * and written every RUN_FLUSH_MS, the newest RUNS_KEPT per flow; a crash loses at most that window
 * of run records (never packets: they are in the packet store). Delivery is the dispatcher's
 * (outgoing/), which queues and never waits for a target.
 *
 * Permission scopes: a flow restricted to scopes (recorded from whoever saved it last) takes only
 * packets of devices of those scopes and alarm entries a reader with those scopes would see.
 */

export const RUNS_KEPT = 20;
const MAX_QUEUED = 10_000;
const CACHE_MS = 30_000;
const RUN_FLUSH_MS = 500;
const WARN_EVERY_MS = 10_000;
const MAX_STORED_JSON = 64 * 1024;

type Item = { kind: 'packet'; update: StateUpdate } | { kind: 'alarm'; entry: AlarmEntry };

interface RunRecord {
  id: string;
  flowId: string;
  trigger: 'packet' | 'alarm';
  outcome: FlowRunOutcome;
  input: unknown;
  output: unknown;
  error: unknown;
  deliveries: unknown[];
  durationMs: number;
  startedAt: Date;
}

const RUN_SQL = `
  INSERT INTO integration_flow_runs (id, flow_id, trigger, outcome, input, output, error, deliveries, duration_ms, started_at)
  SELECT ?, id, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?, ? FROM integration_flows WHERE id = ?`;
const PRUNE_SQL = `
  DELETE FROM integration_flow_runs WHERE flow_id = ? AND id NOT IN (
    SELECT id FROM integration_flow_runs WHERE flow_id = ? ORDER BY started_at DESC, id DESC LIMIT ${RUNS_KEPT})`;

/** JSON as stored in a run: large values are cut to a preview so one run cannot bloat the table. */
function storable(value: unknown): string {
  const text = JSON.stringify(value ?? null);
  return text.length <= MAX_STORED_JSON
    ? text
    : JSON.stringify({ truncated: true, preview: text.slice(0, 2000) });
}

export class FlowRunner implements Lifecycle {
  readonly name = 'integration-flows';
  private queue: Item[] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly flows = new Map<string, { flows: LoadedFlow[]; at: number }>();
  /** Accounts with an active packet flow; undefined until first loaded (then every item is queued). */
  private packetAccounts: Set<string> | undefined;
  private packetAccountsAt = 0;
  private loadingAccounts: Promise<void> | undefined;
  private readonly deviceConnectors = new Map<string, string | null>();
  private pendingRuns = new Map<string, RunRecord[]>();
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly lastWarn = new Map<string, number>();
  private readonly dropped;
  private readonly runsCounter;

  constructor(
    private readonly deps: {
      orm: MikroORM;
      scripts: FlowScripts;
      dispatch: OutgoingDispatch;
      metrics: Metrics;
      log: FastifyBaseLogger;
    },
  ) {
    this.dropped = deps.metrics.counter(
      'stellwerk_flow_items_dropped_total',
      'Flow items dropped because the flow queue was full',
    );
    this.runsCounter = deps.metrics.counter('stellwerk_flow_runs_total', 'Integration flow runs by outcome', [
      'outcome',
    ]);
    deps.metrics.gauge('stellwerk_flow_queue_length', 'Items waiting for integration flows', [], (g) =>
      g.set(this.queue.length),
    );
  }

  /** The ingest pipeline's processed listener: synchronous and cheap, never waits. */
  readonly onPackets = (updates: StateUpdate[]): void => {
    if (this.stopped) return;
    this.refreshPacketAccounts();
    for (const update of updates) {
      if (this.packetAccounts && !this.packetAccounts.has(update.accountId)) continue;
      this.push({ kind: 'packet', update });
    }
  };

  /** Alarm log entries start flows whose source is `alarms`. */
  listenTo(events: AlarmEntryEvents): void {
    events.onCreated((entry) => {
      if (!this.stopped) this.push({ kind: 'alarm', entry });
    });
  }

  /** A flow, filter or transformer of the account changed. */
  invalidate(accountId: string): void {
    this.flows.delete(accountId);
    this.packetAccountsAt = 0;
    this.refreshPacketAccounts();
  }

  /** Packets of a device moved to another connector (or the device went). */
  forgetDevice(deviceId: string): void {
    this.deviceConnectors.delete(deviceId);
  }

  async start(): Promise<void> {
    this.stopped = false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue = [];
    await this.running;
    clearTimeout(this.flushTimer);
    await this.flushRuns();
    this.deps.scripts.dispose();
  }

  /** Runs waiting to be written (tests wait for them). */
  async flushRuns(): Promise<void> {
    await this.flushing;
    if (this.pendingRuns.size === 0) return;
    const batch = this.pendingRuns;
    this.pendingRuns = new Map();
    this.flushing = (async () => {
      const connection = this.deps.orm.em.getConnection();
      for (const [flowId, runs] of batch) {
        try {
          for (const r of runs) {
            await connection.execute(
              RUN_SQL,
              [
                r.id,
                r.trigger,
                r.outcome,
                storable(r.input),
                storable(r.output),
                JSON.stringify(r.error),
                JSON.stringify(r.deliveries),
                r.durationMs,
                r.startedAt,
                flowId,
              ],
              'run',
            );
          }
          await connection.execute(PRUNE_SQL, [flowId, flowId], 'run');
        } catch (error) {
          this.deps.log.warn({ err: error, flowId }, 'integration flows: run records not written');
        }
      }
    })().finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  private push(item: Item): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped.inc();
      this.warnOnce(
        'queue-full',
        { queued: this.queue.length },
        'integration flows: queue full, item dropped',
      );
      return;
    }
    this.queue.push(item);
    this.running ??= this.work();
  }

  private async work(): Promise<void> {
    try {
      while (!this.stopped && this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        for (const item of batch) {
          if (this.stopped) break;
          try {
            await this.handle(item);
          } catch (error) {
            this.deps.log.warn({ err: error }, 'integration flows: item failed');
          }
        }
      }
    } finally {
      this.running = undefined;
      if (!this.stopped && this.queue.length > 0) this.running = this.work();
    }
  }

  private async handle(item: Item): Promise<void> {
    const accountId = item.kind === 'packet' ? item.update.accountId : item.entry.accountId;
    const flows = await this.flowsOf(accountId);
    if (flows.length === 0) return;
    let input: Record<string, unknown>;
    let matching: LoadedFlow[];
    if (item.kind === 'packet') {
      const { update } = item;
      const connectorId = await this.connectorOf(update.deviceId);
      matching = flows.filter((f) => {
        if (f.source.type !== 'packets') return false;
        if (!scopeFilter(f).allows(update.permissionScopeId)) return false;
        const connectors = f.source.connectorIds ?? [];
        const devices = f.source.deviceIds ?? [];
        if (connectors.length === 0 && devices.length === 0) return true;
        return (
          devices.includes(update.deviceId) || (connectorId !== null && connectors.includes(connectorId))
        );
      });
      input = {
        deviceId: update.deviceId,
        connectorId,
        accountId,
        receivedAt: update.receivedAt.toISOString(),
        states: update.states,
      };
    } else {
      const { entry } = item;
      matching = [];
      for (const f of flows)
        if (
          f.source.type === 'alarms' &&
          (!f.source.categories?.length || f.source.categories.includes(entry.category)) &&
          (await entryVisibleWithin(this.deps.orm.em.fork(), entry.id, f.permissionScopeIds))
        )
          matching.push(f);
      input = { ...entry, createdAt: new Date(entry.createdAt).toISOString() };
    }
    for (const flow of matching) await this.run(flow, item.kind, input);
  }

  private async run(
    flow: LoadedFlow,
    trigger: 'packet' | 'alarm',
    input: Record<string, unknown>,
  ): Promise<void> {
    const startedAt = new Date();
    const began = performance.now();
    const meta = { flowId: flow.id, flowTitle: flow.title, trigger };
    const result = await executeSteps(flow, input, meta, this.deps.scripts, (details) =>
      this.warnOnce(
        `invalid:${details.filterId}`,
        { code: 'DS_FILTER_INVALID_INPUT', ...details },
        'DS_FILTER_INVALID_INPUT: filter input does not fit its input type',
      ),
    );
    const deliveries: Array<Record<string, unknown>> = [];
    let outcome: FlowRunOutcome = result.outcome === 'passed' ? 'sent' : result.outcome;
    if (result.outcome === 'passed') {
      for (const target of flow.targets) {
        try {
          const sent = await this.deps.dispatch.send(
            flow.accountId,
            target.connectorId,
            {
              body: result.output,
              subject: target.subject ?? flow.title,
              ...(target.topic ? { topic: target.topic } : {}),
            },
            { kind: 'flow', id: flow.id },
          );
          deliveries.push({ connectorId: target.connectorId, ...sent });
        } catch (error) {
          deliveries.push({
            connectorId: target.connectorId,
            queued: false,
            reason: safeErrorMessage(error),
          });
        }
      }
      if (deliveries.length > 0 && deliveries.every((d) => d.queued !== true)) outcome = 'failed';
    }
    this.runsCounter.inc({ outcome });
    this.record({
      id: newId(),
      flowId: flow.id,
      trigger,
      outcome,
      input,
      output: result.output,
      error: result.error,
      deliveries,
      durationMs: Math.round(performance.now() - began),
      startedAt,
    });
  }

  private record(run: RunRecord): void {
    const runs = this.pendingRuns.get(run.flowId) ?? [];
    runs.push(run);
    if (runs.length > RUNS_KEPT) runs.shift();
    this.pendingRuns.set(run.flowId, runs);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        void this.flushRuns();
      }, RUN_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  private warnOnce(key: string, details: Record<string, unknown>, message: string): void {
    const now = Date.now();
    if (now - (this.lastWarn.get(key) ?? 0) < WARN_EVERY_MS) return;
    this.lastWarn.set(key, now);
    this.deps.log.warn(details, message);
  }

  private refreshPacketAccounts(): void {
    if (this.loadingAccounts || Date.now() - this.packetAccountsAt < CACHE_MS) return;
    this.packetAccountsAt = Date.now();
    this.loadingAccounts = this.deps.orm.em
      .getConnection()
      .execute<Array<{ account_id: string }>>(
        `SELECT DISTINCT account_id FROM integration_flows WHERE active AND source->>'type' = 'packets'`,
      )
      .then(
        (rows) => void (this.packetAccounts = new Set(rows.map((r) => r.account_id))),
        (error: unknown) => {
          this.packetAccountsAt = 0;
          this.deps.log.warn({ err: error }, 'integration flows: cannot read which accounts have flows');
        },
      )
      .finally(() => (this.loadingAccounts = undefined));
  }

  private async connectorOf(deviceId: string): Promise<string | null> {
    if (this.deviceConnectors.has(deviceId)) return this.deviceConnectors.get(deviceId)!;
    const rows = await this.deps.orm.em
      .getConnection()
      .execute<Array<{ connector_id: string | null }>>(
        'SELECT connector_id FROM virtual_devices WHERE id = ?',
        [deviceId],
      );
    const connectorId = rows[0]?.connector_id ?? null;
    if (this.deviceConnectors.size > 50_000) this.deviceConnectors.clear();
    this.deviceConnectors.set(deviceId, connectorId);
    return connectorId;
  }

  private async flowsOf(accountId: string): Promise<LoadedFlow[]> {
    const cached = this.flows.get(accountId);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.flows;
    const em = this.deps.orm.em.fork();
    const rows = await em.find(IntegrationFlow, { account: accountId, active: true });
    const ids = (type: string) =>
      rows.flatMap((f) => f.steps.filter((s) => s.type === type).map((s) => s.id));
    const filters = new Map(
      (await em.find(FlowFilter, { id: { $in: ids('filter') } })).map((f) => [f.id, f]),
    );
    const transformers = new Map(
      (await em.find(FlowTransformer, { id: { $in: ids('transformer') } })).map((t) => [t.id, t]),
    );
    const flows: LoadedFlow[] = rows.map((f) => ({
      id: f.id,
      accountId,
      title: f.title,
      source: f.source,
      targets: f.targets,
      permissionScopeIds: f.permissionScopeIds,
      steps: f.steps.flatMap((s): LoadedStep[] => {
        const filter = s.type === 'filter' ? filters.get(s.id) : undefined;
        if (filter) return [{ type: 'filter', filter }];
        const transformer = s.type === 'transformer' ? transformers.get(s.id) : undefined;
        return transformer ? [{ type: 'transformer', transformer }] : [];
      }),
    }));
    this.flows.set(accountId, { flows, at: Date.now() });
    return flows;
  }
}
