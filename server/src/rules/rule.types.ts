import type { Schedule } from '../platform/schedule.js';
import type { Condition } from './conditions.js';
import type { GeoArea } from './geofence.js';

/** Fires on incoming data: when the twin's states satisfy the conditions after one of them changed. */
export interface EventTrigger {
  type: 'event';
  conditions: Condition[];
  /** `all` (default) or `any` of the conditions. */
  match?: 'all' | 'any';
  /**
   * true (default): fires when the conditions start to hold, not again while they keep holding;
   * false: fires on every change of a condition's state while they hold.
   */
  onChangeOnly?: boolean;
}

/** Fires at a time point, on a cron expression or every interval, in the account's time zone. */
export interface TimeTrigger {
  type: 'time';
  schedule: Schedule;
}

/** Fires when a twin's position enters and/or leaves an area. */
export interface LocationTrigger {
  type: 'location';
  area: GeoArea;
  on: 'enter' | 'leave' | 'both';
  /** The state holding the position (default `location`). */
  locationKey?: string;
  /** Or two numeric states with the coordinates. */
  latitudeKey?: string;
  longitudeKey?: string;
}

export type RuleTrigger = EventTrigger | TimeTrigger | LocationTrigger;

/** A command: `type` names a command plugin (rules/commands/); the rest is its settings. */
export interface RuleCommand {
  type: string;
  [setting: string]: unknown;
}

/** What a run of the rule's commands produced (kept on the rule for debugging). */
export interface RuleRunResult {
  at: string;
  trigger: string;
  twinId: string | null;
  commands: Array<{ type: string; ok: boolean; result?: Record<string, unknown>; error?: string }>;
}
