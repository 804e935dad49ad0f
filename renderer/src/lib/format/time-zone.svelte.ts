import { knownTimeZone } from './date-format';

export type TimeZoneChoice = 'account' | 'browser' | 'utc';
export const TIME_ZONE_CHOICES: TimeZoneChoice[] = ['account', 'browser', 'utc'];
const STORAGE_KEY = 'stellwerk.timeZone';

const isChoice = (value: unknown): value is TimeZoneChoice =>
  value === 'account' || value === 'browser' || value === 'utc';

/**
 * The zone the console shows times in: the account's (set at sign-in from the user's account) unless
 * the user chose this computer's zone or UTC (kept in localStorage, shown in the top bar).
 */
class TimeZoneSetting {
  choice = $state<TimeZoneChoice>(readChoice());
  account = $state('UTC');
  readonly browser = knownTimeZone(Intl.DateTimeFormat().resolvedOptions().timeZone) ?? 'UTC';

  /** The IANA zone in use now; reading it in a component re-renders times when it changes. */
  get zone(): string {
    if (this.choice === 'utc') return 'UTC';
    if (this.choice === 'browser') return this.browser;
    return this.account;
  }

  zoneOf(choice: TimeZoneChoice): string {
    return choice === 'utc' ? 'UTC' : choice === 'browser' ? this.browser : this.account;
  }

  followAccount(zone: string | undefined): void {
    this.account = knownTimeZone(zone) ?? 'UTC';
  }

  set(choice: TimeZoneChoice): void {
    this.choice = choice;
    localStorage.setItem(STORAGE_KEY, choice);
  }
}

function readChoice(): TimeZoneChoice {
  const stored = localStorage.getItem(STORAGE_KEY);
  return isChoice(stored) ? stored : 'account';
}

export const timeZone = new TimeZoneSetting();
