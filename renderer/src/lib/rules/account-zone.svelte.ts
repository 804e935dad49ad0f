import { api } from '../../api/client';
import { session } from '../session.svelte';

/** The signed-in account's time zone (cron schedules are read in it), fetched once. */
class AccountZone {
  zone = $state<string | null>(null);
  private loading: Promise<void> | undefined;

  load(): void {
    const accountId = session.user?.accountId;
    if (!accountId || this.loading) return;
    this.loading = api
      .call('GET /xapi/v1/accounts/{id}', { path: { id: accountId } })
      .then((account) => {
        this.zone = account.timeZone;
      })
      .catch(() => {
        // Without account.read the zone stays unknown; the hint then names none.
        this.loading = undefined;
      });
  }
}

export const accountZone = new AccountZone();
