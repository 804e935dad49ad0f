import { api } from '../../api/client';
import type { Body, Reply } from '../../api/generated';
import { EditorSave } from '../../lib/editor-save.svelte';

export type AccountDetail = Reply<'GET /xapi/v1/accounts/{id}'>;
export type AccountChange = Body<'PUT /xapi/v1/accounts/{id}'>;

/**
 * One settings section's save: a spinner while the PUT runs, the server's error, and a "Saved."
 * that fades after a few seconds (EditorSave). Each section sends only its own fields.
 */
export class SectionSave {
  private readonly state = new EditorSave();
  get busy(): boolean {
    return this.state.busy;
  }
  get error(): unknown {
    return this.state.error;
  }
  get saved(): boolean {
    return this.state.saved;
  }

  async run(id: string, change: AccountChange): Promise<AccountDetail | null> {
    return (
      (await this.state.run(() => api.call('PUT /xapi/v1/accounts/{id}', { path: { id }, body: change }))) ??
      null
    );
  }
}
