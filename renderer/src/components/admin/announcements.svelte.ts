import { api } from '../../api/client';
import type { Reply } from '../../api/generated';

export type VisibleAnnouncement = Reply<'GET /xapi/v1/announcements'>['data'][number];

/**
 * The announcements the signed-in user sees (own account and inherited), shared by the banner in
 * the layout and the settings page, which reloads it after publishing or withdrawing one.
 */
class AnnouncementFeed {
  items = $state<VisibleAnnouncement[]>([]);
  error = $state<unknown>(null);

  get shown(): VisibleAnnouncement[] {
    return this.items.filter((a) => a.active && !a.dismissed);
  }

  async load(): Promise<void> {
    try {
      this.items = (await api.call('GET /xapi/v1/announcements')).data;
      this.error = null;
    } catch (failure) {
      this.error = failure;
    }
  }

  async dismiss(id: string): Promise<void> {
    try {
      const updated = await api.call('PUT /xapi/v1/announcements/{id}/state', {
        path: { id },
        body: { dismissed: true },
      });
      this.items = this.items.map((a) => (a.id === id ? { ...a, dismissed: updated.dismissed } : a));
    } catch (failure) {
      this.error = failure;
    }
  }
}

export const announcementFeed = new AnnouncementFeed();
