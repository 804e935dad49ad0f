import { alarmCommand } from './alarm.command.js';
import type { RuleCommandPlugin } from './command.js';
import { downlinkCommand } from './downlink.command.js';
import { emailCommand, mqttPublishCommand, webhookCommand } from './outgoing.commands.js';
import { aggregateTriggerCommand, setStateCommand } from './state.commands.js';

/** Every rule command plugin by type. */
export const RULE_COMMANDS: ReadonlyMap<string, RuleCommandPlugin> = new Map(
  [
    webhookCommand,
    emailCommand,
    mqttPublishCommand,
    setStateCommand,
    aggregateTriggerCommand,
    alarmCommand,
    downlinkCommand,
  ].map((p) => [p.type, p]),
);
