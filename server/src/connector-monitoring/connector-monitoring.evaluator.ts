import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { AlarmLogService } from '../alarms/alarm-log.service.js';
import { alarmLink } from '../alarms/alarm-link.js';
import { CONNECTOR_MONITORING_CATEGORY, type AlarmSeverity } from '../alarms/alarm-log.entity.js';
import type { Connector } from '../connectors/connector.entity.js';
import type { AlarmEntry, OutgoingDispatch } from '../integration/ports.js';
import { AdvisoryLease } from '../platform/db/advisory-lock.js';
import type { Lifecycle } from '../platform/lifecycle.js';
import { ConnectorMonitoringRule } from './connector-monitoring-rule.entity.js';
import { observe, type ConnectorStatus } from './monitoring-conditions.js';

/**
 * Evaluates every active connector-monitoring rule each round (default every 10 s), on one node at
 * a time (an advisory lease). A rule fires when its condition starts to hold: one alarm log entry
 * (category Konnektorüberwachung, the connector as reference) and, when configured, one e-mail.
 * While the condition keeps holding it does not fire again; once a round finds it no longer
 * holding, the rule re-arms (edge-triggered, `state.firing`).
 *
 * Failure behaviour: a failing rule is logged and skipped for the round (its state unchanged); a
 * mail that cannot be queued is logged; the alarm entry is written regardless.
 */

export const CONNECTOR_MONITORING_LOCK = 0x434d_4f4e; // "CMON"

export interface MonitoringFired {
  ruleId: string;
  connectorId: string;
  alarmId: string;
  message: string;
}

/** What a gateway-offline alarm names about the gateway. */
export interface OfflineGateway {
  id: string;
  connectorId: string;
  eui: string;
  title: string;
  lastSeenAt: Date | null;
}

export interface ConnectorMonitoringEvaluatorOptions {
  orm: MikroORM;
  databaseUrl: string;
  clock: () => Date;
  log: FastifyBaseLogger;
  alarms: AlarmLogService;
  outgoing: OutgoingDispatch;
  /** Stored counters plus this node's unflushed ones (ConnectorService.counters). */
  counters(connector: Connector): { packetsIn: number; packetsFailed: number; lastPacketAt: Date | null };
  statusOf(connector: Connector): ConnectorStatus;
  tickMs?: number;
  /** The console's address, for the alarm link in mails (`STELLWERK_PUBLIC_URL`). */
  publicUrl?: string;
}

/** A gateway gone offline cuts off every device behind it; the counters' rules are warnings. */
const severityOf = (ruleType: string): AlarmSeverity =>
  ruleType === 'gateway-offline' ? 'major' : 'warning';

export class ConnectorMonitoringEvaluator implements Lifecycle {
  readonly name = 'connector-monitoring';
  private readonly lease: AdvisoryLease;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(private readonly options: ConnectorMonitoringEvaluatorOptions) {
    this.lease = new AdvisoryLease(options.databaseUrl, CONNECTOR_MONITORING_LOCK);
  }

  async start(): Promise<void> {
    this.timer ??= setInterval(() => void this.tick(), this.options.tickMs ?? 10_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.lease.release();
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = (async () => {
      try {
        if (await this.lease.acquire()) await this.evaluate(this.options.clock());
      } catch (error) {
        this.options.log.warn({ err: error }, 'connector monitoring: round failed');
      }
    })();
    await this.running;
    this.running = undefined;
  }

  /** One round at `now` (tests call this directly with their clock). */
  async evaluate(now: Date): Promise<MonitoringFired[]> {
    const em = this.options.orm.em.fork();
    const rules = await em.find(
      ConnectorMonitoringRule,
      { active: true },
      { populate: ['connector', 'mailConnector', 'account'], orderBy: { id: 'asc' } },
    );
    const fired: MonitoringFired[] = [];
    for (const rule of rules) {
      if (rule.type === 'gateway-offline') continue;
      try {
        const result = await this.evaluateRule(rule, now);
        if (result) fired.push(result);
      } catch (error) {
        this.options.log.warn({ err: error, ruleId: rule.id }, 'connector monitoring: rule failed');
      }
    }
    await em.flush();
    return fired;
  }

  private async evaluateRule(rule: ConnectorMonitoringRule, now: Date): Promise<MonitoringFired | undefined> {
    const connector = rule.connector;
    const counters = this.options.counters(connector);
    const verdict = observe(rule.type, rule.params, rule.state, {
      now: now.getTime(),
      packetsIn: counters.packetsIn,
      packetsFailed: counters.packetsFailed,
      lastPacketAt: counters.lastPacketAt ? new Date(counters.lastPacketAt).getTime() : null,
      status: this.options.statusOf(connector),
      watchingSince: Math.max(rule.createdAt.getTime(), new Date(connector.createdAt).getTime()),
    });
    const fires = verdict.holds && !rule.state.firing;
    const rearmed = !verdict.holds && rule.state.firing === true;
    rule.state = { ...verdict.state, firing: verdict.holds };
    // The condition stopped holding: its entry closes itself (a new one opens when it fires again).
    if (rearmed)
      await this.options.alarms.clear(
        rule.account.id,
        { kind: 'connector-monitoring', id: rule.id },
        { type: 'connector', id: connector.id },
      );
    if (!fires) return undefined;
    rule.lastFiredAt = now;
    const message = `${rule.title}: connector "${connector.title}" ${verdict.message}`;
    const alarm = await this.options.alarms.write({
      accountId: rule.account.id,
      category: CONNECTOR_MONITORING_CATEGORY,
      message,
      reference: { type: 'connector', id: connector.id },
      source: { kind: 'connector-monitoring', id: rule.id },
      severity: severityOf(rule.type),
      details: { ruleType: rule.type, connectorTitle: connector.title, ...verdict.details },
    });
    if (rule.mailConnector) await this.mail(rule, message, now, alarm);
    return { ruleId: rule.id, connectorId: connector.id, alarmId: alarm.id, message };
  }

  /**
   * A gateway of `connectorId` went offline: every active `gateway-offline` rule watching that
   * connector writes one alarm entry (the gateway as reference) and, when configured, one e-mail.
   * The gateway's status change is the edge, so a gateway fires once per time it goes offline.
   */
  async gatewayWentOffline(gateway: OfflineGateway, now: Date): Promise<MonitoringFired[]> {
    const em = this.options.orm.em.fork();
    const rules = await em.find(
      ConnectorMonitoringRule,
      { active: true, type: 'gateway-offline', connector: gateway.connectorId },
      { populate: ['connector', 'mailConnector', 'account'], orderBy: { id: 'asc' } },
    );
    const fired: MonitoringFired[] = [];
    for (const rule of rules) {
      const silent = gateway.lastSeenAt
        ? `nothing heard since ${gateway.lastSeenAt.toISOString()}`
        : 'never heard';
      const message = `${rule.title}: gateway "${gateway.title}" (${gateway.eui}) of connector "${rule.connector.title}" is offline, ${silent}`;
      const alarm = await this.options.alarms.write({
        accountId: rule.account.id,
        category: CONNECTOR_MONITORING_CATEGORY,
        message,
        reference: { type: 'gateway', id: gateway.id },
        source: { kind: 'connector-monitoring', id: rule.id },
        severity: severityOf(rule.type),
        details: {
          ruleType: rule.type,
          connectorId: rule.connector.id,
          connectorTitle: rule.connector.title,
          gatewayEui: gateway.eui,
          gatewayTitle: gateway.title,
          lastSeenAt: gateway.lastSeenAt?.toISOString() ?? null,
        },
      });
      rule.lastFiredAt = now;
      if (rule.mailConnector) await this.mail(rule, message, now, alarm);
      fired.push({ ruleId: rule.id, connectorId: rule.connector.id, alarmId: alarm.id, message });
    }
    await em.flush();
    return fired;
  }

  private async mail(
    rule: ConnectorMonitoringRule,
    message: string,
    now: Date,
    alarm: AlarmEntry,
  ): Promise<void> {
    const link = this.options.publicUrl ? `\nAlarm: ${alarmLink(this.options.publicUrl, alarm.id)}` : '';
    try {
      const result = await this.options.outgoing.send(
        rule.account.id,
        rule.mailConnector!.id,
        {
          subject: `[${CONNECTOR_MONITORING_CATEGORY}] ${rule.title}`,
          body: `${message}\n\nSeverity: ${alarm.severity}\nTime: ${now.toISOString()}\nRule: ${rule.title} (${rule.type})${link}`,
          ...(rule.mailTo.length ? { to: rule.mailTo } : {}),
        },
        { kind: 'connector-monitoring', id: rule.id },
      );
      if (!result.queued)
        this.options.log.warn({ ruleId: rule.id, reason: result.reason }, 'monitoring mail not queued');
    } catch (error) {
      this.options.log.warn({ err: error, ruleId: rule.id }, 'connector monitoring: mail failed');
    }
  }
}
