import type { AppContext } from '../context.js';
import type { AccountService } from '../accounts/account.service.js';
import { AlarmBulkService } from '../alarms/alarm-bulk.service.js';
import { AlarmLogService } from '../alarms/alarm-log.service.js';
import { AlarmReportService } from '../alarms/alarm-report.service.js';
import { SmartGroupService } from '../alarms/smart-group.service.js';
import { ConnectorMonitoringEvaluator } from '../connector-monitoring/connector-monitoring.evaluator.js';
import { ConnectorMonitoringService } from '../connector-monitoring/connector-monitoring.service.js';
import { connectorStatus } from '../connector-monitoring/connector-status.js';
import type { ConnectorService } from '../connectors/connector.service.js';
import { OutgoingDispatchRef } from '../integration/outgoing-dispatch-ref.js';
import type { CommandRun } from './commands/command.js';
import { LeaderTimer } from '../platform/leader-timer.js';
import type { StateEngine } from '../states/engine/state-engine.js';
import type { DigitalTwinService } from '../twins/digital-twin.service.js';
import { RuleEngine } from './rule-engine.js';
import { RuleRunner } from './rule-runner.js';
import { RuleScheduler } from './rule-scheduler.js';
import { RuleService } from './rule.service.js';

export const ALARM_REPORTS_LOCK = 0x4152_5054; // "ARPT"

/**
 * Alarm log, smart groups and alarm reports, connector monitoring and rules, wired together:
 * - everything that sends goes through one OutgoingDispatch (`outgoing`; the outgoing connectors'
 *   dispatcher is attached with `outgoing.use(...)`),
 * - the rule engine listens to the state engine's changes,
 * - the monitoring evaluator and both schedulers are lifecycle parts (not started in tests).
 */
export function createAlarmsAndRules(
  ctx: AppContext,
  deps: {
    accounts: AccountService;
    connectors: ConnectorService;
    digitalTwins: DigitalTwinService;
    stateEngine: StateEngine;
    isClientConnected(connectorId: string): boolean;
    brokerClients(connectorId: string): number;
    downlinks: CommandRun['downlinks'];
  },
) {
  const databaseUrl = String(ctx.orm.config.get('clientUrl'));
  const outgoing = new OutgoingDispatchRef(ctx.log);
  const alarmLogs = new AlarmLogService(ctx.em, ctx.orm, deps.accounts, ctx.clock, ctx.log);
  const alarmBulk = new AlarmBulkService(ctx.em, deps.accounts, alarmLogs, ctx.clock);
  const smartGroups = new SmartGroupService(ctx.em, deps.accounts);
  const alarmReports = new AlarmReportService(
    ctx.em,
    ctx.orm,
    deps.accounts,
    smartGroups,
    alarmLogs,
    outgoing,
    ctx.clock,
    ctx.log,
  );
  const alarmReportScheduler = new LeaderTimer('alarm-report-scheduler', {
    databaseUrl,
    lockKey: ALARM_REPORTS_LOCK,
    everyMs: 10_000,
    clock: ctx.clock,
    log: ctx.log,
    round: (now) => alarmReports.runDue(now),
  });

  const connectorMonitoring = new ConnectorMonitoringService(ctx.em, deps.accounts);
  const monitoringEvaluator = new ConnectorMonitoringEvaluator({
    orm: ctx.orm,
    databaseUrl,
    clock: ctx.clock,
    log: ctx.log,
    alarms: alarmLogs,
    outgoing,
    publicUrl: ctx.config.publicUrl,
    counters: (connector) => deps.connectors.counters(connector),
    statusOf: (connector) =>
      connectorStatus(connector, {
        clientConnected: (id) => deps.isClientConnected(id),
        brokerClients: (id) => deps.brokerClients(id),
      }),
  });
  deps.connectors.deletionGuards.push(
    (connectorId) => connectorMonitoring.mailConnectorBlockers(connectorId),
    (connectorId) => alarmReports.mailConnectorBlockers(connectorId),
  );

  const ruleRunner = new RuleRunner({
    orm: ctx.orm,
    engine: deps.stateEngine,
    outgoing,
    alarms: alarmLogs,
    downlinks: deps.downlinks,
    publicUrl: ctx.config.publicUrl,
    log: ctx.log,
  });
  const ruleEngine = new RuleEngine({
    orm: ctx.orm,
    runner: ruleRunner,
    alarms: alarmLogs,
    clock: ctx.clock,
    log: ctx.log,
    metrics: ctx.metrics,
  });
  deps.stateEngine.onStateChanges(ruleEngine.onStateChanges);
  const ruleScheduler = new RuleScheduler({
    orm: ctx.orm,
    databaseUrl,
    runner: ruleRunner,
    clock: ctx.clock,
    log: ctx.log,
  });
  const rules = new RuleService(ctx.em, deps.accounts, deps.digitalTwins, ctx.clock, deps.downlinks);
  rules.changeListeners.push(() => ruleEngine.rulesChanged());

  ctx.lifecycle.push(monitoringEvaluator, ruleScheduler, alarmReportScheduler, ruleEngine);
  return {
    outgoing,
    alarmLogs,
    alarmBulk,
    smartGroups,
    alarmReports,
    connectorMonitoring,
    monitoringEvaluator,
    ruleRunner,
    ruleEngine,
    ruleScheduler,
    rules,
  };
}
