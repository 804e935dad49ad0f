import type { OutgoingMessage } from '../../integration/ports.js';
import type { RuleCommand } from '../rule.types.js';
import { kindTypesWhere } from '../../connectors/kinds/index.js';
import type { OutgoingMessageKind } from '../../connectors/connector-kind.js';
import { connectorProblem, isText, type CommandRun, type RuleCommandPlugin } from './command.js';

/** The kinds a command can send through: those delivering its kind of message. */
const kindsDelivering = (message: OutgoingMessageKind) => kindTypesWhere((k) => k.delivers === message);

/** Queues a message on an outgoing connector; a full queue or an inactive connector fails the command. */
async function send(command: RuleCommand, ctx: CommandRun, message: OutgoingMessage) {
  const result = await ctx.outgoing.send(ctx.accountId, String(command.connectorId), message, {
    kind: 'rule',
    id: ctx.ruleId,
  });
  if (!result.queued) throw new Error(`not queued: ${result.reason}`);
  return { connectorId: command.connectorId, queued: true };
}

const headersProblem = (h: unknown) =>
  h === undefined ||
  (typeof h === 'object' && h !== null && !Array.isArray(h) && Object.values(h).every((v) => isText(v, 2000)))
    ? undefined
    : 'headers must be an object of texts';

/**
 * A body object carries the alarm an earlier command of the run raised as `alarm: {id, severity,
 * occurrenceCount, link}`, unless the rule's body already has an `alarm` key (then it is the rule's).
 */
function withAlarm(body: unknown, ctx: CommandRun): unknown {
  const alarm = ctx.alarm();
  if (!alarm || typeof body !== 'object' || body === null || Array.isArray(body) || 'alarm' in body)
    return body;
  return { ...body, alarm };
}

/** A mail body ends with the alarm's severity and console link, unless the text names the link already. */
function mailWithAlarm(body: string, ctx: CommandRun): string {
  const alarm = ctx.alarm();
  if (!alarm || body.includes(alarm.link)) return body;
  return `${body}\n\nSeverity: ${alarm.severity}\nAlarm: ${alarm.link}`;
}

/** `{type:'webhook', connectorId, body?, headers?}` through a connector delivering HTTP requests (webhook-out). */
export const webhookCommand: RuleCommandPlugin = {
  type: 'webhook',
  async validate(c, v) {
    return headersProblem(c.headers) ?? (await connectorProblem(c, v, kindsDelivering('http')));
  },
  run: (c, ctx) =>
    send(c, ctx, {
      body: withAlarm(ctx.renderValue(c.body ?? {}), ctx),
      ...(c.headers ? { headers: ctx.renderValue(c.headers) as Record<string, string> } : {}),
    }),
};

/** `{type:'email', connectorId, subject, body, to?}` through a mail connector (smtp-mail). */
export const emailCommand: RuleCommandPlugin = {
  type: 'email',
  async validate(c, v) {
    if (!isText(c.subject, 500) || !isText(c.body)) return 'subject and body are required texts';
    if (
      c.to !== undefined &&
      !(Array.isArray(c.to) && c.to.length <= 50 && c.to.every((t) => isText(t, 320) && t.includes('@')))
    )
      return 'to must be a list of e-mail addresses';
    return connectorProblem(c, v, kindsDelivering('mail'));
  },
  run: (c, ctx) =>
    send(c, ctx, {
      subject: ctx.render(String(c.subject)),
      body: mailWithAlarm(ctx.render(String(c.body)), ctx),
      ...(Array.isArray(c.to) ? { to: c.to as string[] } : {}),
    }),
};

/** `{type:'mqtt-publish', connectorId, topic?, body}` through a connector publishing MQTT (mqtt-out). */
export const mqttPublishCommand: RuleCommandPlugin = {
  type: 'mqtt-publish',
  async validate(c, v) {
    if (c.topic !== undefined && !(isText(c.topic, 1000) && c.topic.length > 0 && !/[#+]/.test(c.topic)))
      return 'topic must be a topic name without wildcards';
    return connectorProblem(c, v, kindsDelivering('mqtt'));
  },
  run: (c, ctx) =>
    send(c, ctx, {
      body: ctx.renderValue(c.body ?? {}),
      ...(typeof c.topic === 'string' ? { topic: ctx.render(c.topic) } : {}),
    }),
};
