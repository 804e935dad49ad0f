import type { AccountService } from '../accounts/account.service.js';
import type { AppContext } from '../context.js';
import type { ConnectorService } from '../connectors/connector.service.js';
import type { ConnectorTelemetry } from '../connectors/connector-telemetry.js';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import { FlowRunner } from '../flows/flow.runner.js';
import { FlowScriptService } from '../flows/flow-script.service.js';
import { FlowScripts } from '../flows/flow-scripts.js';
import { flowsUsing } from '../flows/flows-using.js';
import { IntegrationFlowService } from '../flows/integration-flow.service.js';
import type { IngestPipeline } from '../ingest/pipeline.js';
import type { AlarmEntryEvents } from '../integration/ports.js';
import { MailOAuthService } from './mail-oauth.service.js';
import { OutgoingDispatcher } from './outgoing.dispatcher.js';
import type { DialOut } from './dial/dial-out.js';

/**
 * Outgoing connectors' dispatcher and integration flows, built once.
 * Flows follow committed packets (the pipeline's processed listener) and alarm log entries; both
 * they and rules hand their messages to the dispatcher.
 */
export function createOutgoingAndFlows(
  ctx: AppContext,
  deps: {
    accounts: AccountService;
    connectors: ConnectorService;
    connectorKinds: ConnectorKinds;
    connectorTelemetry: ConnectorTelemetry;
    ingest: IngestPipeline;
    dial: DialOut;
    alarmEntries?: AlarmEntryEvents;
  },
) {
  const outgoingDispatcher = new OutgoingDispatcher({
    orm: ctx.orm,
    kinds: deps.connectorKinds,
    connectorLog: (id, level, message, details) => deps.connectorTelemetry.write(id, level, message, details),
    metrics: ctx.metrics,
    log: ctx.log,
  });
  deps.connectors.onDeactivated((id) => outgoingDispatcher.connectorGone(id));

  const scripts = new FlowScripts();
  const flowRunner = new FlowRunner({
    orm: ctx.orm,
    scripts,
    dispatch: outgoingDispatcher,
    metrics: ctx.metrics,
    log: ctx.log,
  });
  deps.ingest.onProcessed(flowRunner.onPackets);
  if (deps.alarmEntries) flowRunner.listenTo(deps.alarmEntries);
  const changed = (accountId: string) => flowRunner.invalidate(accountId);
  const integrationFlows = new IntegrationFlowService(
    ctx.em,
    deps.accounts,
    (type) =>
      deps.connectorKinds.get(type)?.direction === 'outgoing' && !!deps.connectorKinds.get(type)?.sender,
    changed,
  );
  const flowScripts = new FlowScriptService(ctx.em, deps.accounts, scripts, changed);
  deps.connectors.deletionGuards.push((connectorId) => flowsUsing(ctx.em(), { connectorId }));

  const mailOAuth = new MailOAuthService({
    orm: ctx.orm,
    connectors: deps.connectors,
    secretBox: ctx.secretBox,
    dial: deps.dial,
    publicUrl: ctx.config.publicUrl,
  });
  // Stopped in reverse: the runner (and its last runs) before the dispatcher it sends through.
  ctx.lifecycle.push(outgoingDispatcher, flowRunner);
  return { outgoingDispatcher, flowRunner, integrationFlows, flowScripts, mailOAuth };
}
