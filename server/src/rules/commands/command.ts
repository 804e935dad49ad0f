import type { AlarmLogService } from '../../alarms/alarm-log.service.js';
import type { AlarmEntry, OutgoingDispatch } from '../../integration/ports.js';
import type { RecordedScopes } from '../../permission-scopes/recorded-scopes.js';
import type { RuleCommand } from '../rule.types.js';

/** What rules queue downlinks with (server/src/downlinks/downlink.service.ts). */
export interface DownlinkPort {
  /** Queues for a device of the account visible within `scopes`; throws when it cannot. */
  queueInAccount(
    accountId: string,
    deviceId: string,
    input: {
      fPort?: number;
      bytes?: string;
      encoding?: 'hex' | 'base64';
      data?: unknown;
      confirmed?: boolean;
    },
    createdBy: string,
    scopes: RecordedScopes,
  ): Promise<{ id: string; status: string }>;
  /** Whether the device's connector needs an fPort; null when unknown here (queueing decides). */
  needsFPortInAccount(accountId: string, deviceId: string): Promise<boolean | null>;
}

/** What a command may look up while a rule is saved (everything within the rule's account). */
export interface CommandValidation {
  accountId: string;
  twinId: string | null;
  /** Whether a downlink to a device of the rule's account needs an fPort; null when unknown. */
  downlinkNeedsFPort(deviceId: string): Promise<boolean | null>;
  /** The type of a connector of the rule's account, or null. */
  connectorType(id: string): Promise<string | null>;
  /** A state of the account by id, or of the rule's twin by key; null when there is none. */
  findState(ref: {
    stateId?: unknown;
    stateKey?: unknown;
  }): Promise<{ id: string; sourceType: string | null } | null>;
}

/** A setting the command needs but was not given: reported as `required` at its path. */
export interface MissingSetting {
  missingProperty: string;
  /** English without the setting's name, e.g. `is required with bytes`. */
  message: string;
}

/** What a command gets when its rule fires (already authorized: the rule's account). */
export interface CommandRun {
  accountId: string;
  ruleId: string;
  twinId: string | null;
  now: Date;
  render(text: string): string;
  renderValue(value: unknown): unknown;
  outgoing: OutgoingDispatch;
  alarms: AlarmLogService;
  /** An alarm command wrote (or counted again) this entry: later commands of the run carry it. */
  raised(entry: AlarmEntry): void;
  /** The entry an earlier alarm command of this run raised, with its console link. */
  alarm(): { id: string; severity: string; occurrenceCount: number; link: string } | null;
  downlinks: DownlinkPort;
  /** The scopes the rule runs within (null: unrestricted). */
  permissionScopeIds: RecordedScopes;
  findState(ref: {
    stateId?: unknown;
    stateKey?: unknown;
  }): Promise<{ id: string; sourceType: string | null } | null>;
  setState(stateId: string, value: unknown): Promise<{ changed: boolean }>;
  recompute(stateId: string): Promise<{ changed: boolean }>;
}

/** A command plugin: adding one means adding a file and a line in index.ts, nothing else. */
export interface RuleCommandPlugin {
  type: string;
  /** Why the settings cannot be used (a missing setting by name), or undefined. */
  validate(command: RuleCommand, v: CommandValidation): Promise<string | MissingSetting | undefined>;
  /** Runs the command; the result is kept in the rule's last run. Throws when it failed. */
  run(command: RuleCommand, ctx: CommandRun): Promise<Record<string, unknown>>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);

export const isText = (v: unknown, max = 10_000): v is string => typeof v === 'string' && v.length <= max;

/** Checks `connectorId` names a connector of the account of one of the kinds `type`. */
export async function connectorProblem(
  command: RuleCommand,
  v: CommandValidation,
  type: string | readonly string[],
): Promise<string | undefined> {
  const types = typeof type === 'string' ? [type] : type;
  if (!isUuid(command.connectorId)) return 'connectorId (a uuid) is required';
  const actual = await v.connectorType(command.connectorId);
  if (actual === null) return `connector ${command.connectorId} is not a connector of this account`;
  return types.includes(actual)
    ? undefined
    : `connector ${command.connectorId} is a ${actual} connector; ${command.type} needs ${types.join(' or ')}`;
}
