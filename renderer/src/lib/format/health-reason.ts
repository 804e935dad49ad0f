/** The translated texts of the reasons the server gives for a health state. */
export interface HealthReasonTexts {
  noPacket: string;
  /** `{seconds}` */
  silentFor: string;
  noRuleMatched: string;
  noRules: string;
  /** `{number}` (counted from 1) and `{condition}` (as the rule reads: `battery < 20`) */
  rule: string;
}

/**
 * A device's health reason in the console's language. The server stores it as an English line
 * (server/src/devices/health/health-evaluation.ts, also in alarm messages and the API); the
 * console reads the known shapes and shows any other line as it is.
 */
export function healthReasonText(reason: string | null | undefined, t: HealthReasonTexts): string {
  if (!reason) return '—';
  if (reason === 'no packet received') return t.noPacket;
  if (reason === 'no rule matched') return t.noRuleMatched;
  if (reason === 'no health rules') return t.noRules;
  const silent = /^no packet for more than (\d+) s$/.exec(reason);
  if (silent) return t.silentFor.replace('{seconds}', silent[1]!);
  const rule = /^rule (\d+): (.+)$/s.exec(reason);
  if (rule) return t.rule.replace('{number}', String(Number(rule[1]) + 1)).replace('{condition}', rule[2]!);
  return reason;
}
