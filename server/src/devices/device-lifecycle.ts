import type { EntityManager } from '@mikro-orm/postgresql';
import { VirtualDevice } from './virtual-device.entity.js';

/**
 * A device's way out through its network server (spec: "a device removed from the network server can
 * be in Deleting"): `delete-remotely/true` marks it `Deleting`; the remote deletion
 * (downlinks/remote-deletion.ts) then removes it here, or marks it `DeletionFailed` with the reason.
 * A PUT with `reactivate: true` brings it back from either (spec: "Reactivation is possible"); a
 * remote deletion that finishes after a reactivation leaves the device here.
 */
export const DELETING = 'Deleting';
export const DELETION_FAILED = 'DeletionFailed';

export function reactivate(device: VirtualDevice): void {
  device.lifecycleState = null;
  device.lifecycleReason = null;
}

/** What the remote deletion works with, for the devices domain's table. */
export class DeviceLifecycle {
  constructor(private readonly em: () => EntityManager) {}

  /** Devices still waiting for their network server (a restart picks them up again). */
  async deletingIds(): Promise<string[]> {
    const rows = await this.em()
      .fork()
      .find(VirtualDevice, { lifecycleState: DELETING }, { fields: ['id'] });
    return rows.map((d) => d.id);
  }

  /** The device with its connector while it is `Deleting`, else null (reactivated or gone). */
  async deleting(id: string): Promise<VirtualDevice | null> {
    return this.em()
      .fork()
      .findOne(VirtualDevice, { id, lifecycleState: DELETING }, { populate: ['connector'] });
  }

  /** The network server removed it: it goes here too, unless it was reactivated meanwhile. */
  async deleted(id: string): Promise<void> {
    const em = this.em().fork();
    // Through the ORM, so the ingest cache hears of it (DeviceCacheSubscriber).
    const device = await em.findOne(VirtualDevice, { id, lifecycleState: DELETING });
    if (device) await em.removeAndFlush(device);
  }

  /** The network server did not remove it: the device shows why. */
  async failed(id: string, reason: string): Promise<void> {
    const em = this.em().fork();
    const device = await em.findOne(VirtualDevice, { id, lifecycleState: DELETING });
    if (!device) return;
    device.lifecycleState = DELETION_FAILED;
    device.lifecycleReason = reason.slice(0, 500);
    await em.flush();
  }
}
