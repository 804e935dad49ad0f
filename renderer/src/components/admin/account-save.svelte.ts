import { api } from '../../api/client';
import type { Body, Reply } from '../../api/generated';

export type AccountDetail = Reply<'GET /xapi/v1/accounts/{id}'>;
export type AccountChange = Body<'PUT /xapi/v1/accounts/{id}'>;

/**
 * One settings section's save: a spinner while the PUT runs, the server's error, and a "Saved."
 * that fades after a few seconds. Each section sends only its own fields.
 */
export class SectionSave {
  busy = $state(false);
  error = $state<unknown>(null);
  saved = $state(false);
  private timer: ReturnType<typeof setTimeout> | undefined;

  async run(id: string, change: AccountChange): Promise<AccountDetail | null> {
    this.busy = true;
    this.error = null;
    this.saved = false;
    try {
      const updated = await api.call('PUT /xapi/v1/accounts/{id}', { path: { id }, body: change });
      this.saved = true;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => (this.saved = false), 4000);
      return updated;
    } catch (failure) {
      this.error = failure;
      return null;
    } finally {
      this.busy = false;
    }
  }
}
