import type { FastifyBaseLogger } from 'fastify';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import type { DeviceLifecycle } from '../devices/device-lifecycle.js';
import type { Lifecycle } from '../platform/lifecycle.js';

/**
 * Deletes devices marked `Deleting` at their network server through the kind's `remoteDelete`
 * (TTS: its registries; ChirpStack: its device API), then here. A failure, or a connector whose kind
 * cannot delete devices remotely, leaves the device `DeletionFailed` with the reason, where it can be
 * deleted again, deleted here only, or reactivated. Devices still `Deleting` at start are taken up again.
 */
export class RemoteDeletions implements Lifecycle {
  readonly name = 'remote-deletions';
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly deps: { devices: DeviceLifecycle; kinds: ConnectorKinds; log: FastifyBaseLogger },
  ) {}

  async start(): Promise<void> {
    for (const id of await this.deps.devices.deletingIds()) this.request(id);
  }

  async stop(): Promise<void> {
    await Promise.all(this.running);
  }

  /** Starts deleting the device at its network server; the outcome lands on the device. */
  request(deviceId: string): void {
    const run = this.delete(deviceId)
      .catch((error: unknown) =>
        this.deps.log.warn({ err: error, deviceId }, 'A remote device deletion could not be recorded'),
      )
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Resolves once every deletion under way has ended (tests, stop). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  private async delete(deviceId: string): Promise<void> {
    const device = await this.deps.devices.deleting(deviceId);
    if (!device) return;
    const connector = device.connector;
    const deleter = connector ? this.deps.kinds.get(connector.type)?.remoteDelete : undefined;
    if (!connector || !deleter) {
      const what = connector ? `A ${connector.type} connector` : 'A device without a connector';
      return this.deps.devices.failed(deviceId, `${what} cannot delete devices at a network server`);
    }
    try {
      await deleter.deleteDevice(connector, {
        id: device.id,
        deviceKey: device.deviceId,
        devEui: device.devEui,
        endDeviceId: device.endDeviceId,
      });
    } catch (error) {
      return this.deps.devices.failed(deviceId, error instanceof Error ? error.message : String(error));
    }
    await this.deps.devices.deleted(deviceId);
  }
}
