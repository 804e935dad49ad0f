import type { EventArgs, EventSubscriber } from '@mikro-orm/core';
import { Connector } from '../connectors/connector.entity.js';
import { VirtualDevice } from '../devices/virtual-device.entity.js';
import { DeviceDriver } from '../drivers/device-driver.entity.js';

export interface DeviceCacheInvalidation {
  invalidateDevice(device?: { id?: string; connectorId?: string | null; deviceKey?: string }): void;
  invalidateDriver(driverId: string): void;
  invalidateConnector(connectorId: string): void;
}

type Watched = VirtualDevice | DeviceDriver | Connector;

/**
 * Keeps the ingest path's device cache true to every ORM write of a device, driver or connector,
 * wherever it happens (routes, bulk edits, jobs), so no service has to remember to call it.
 * Raw-SQL bulk writes are wired separately in services.ts; other nodes rely on the cache's expiry.
 */
export class DeviceCacheSubscriber implements EventSubscriber<Watched> {
  constructor(private readonly cache: DeviceCacheInvalidation) {}

  getSubscribedEntities() {
    return [VirtualDevice, DeviceDriver, Connector];
  }

  afterCreate(args: EventArgs<Watched>): void {
    this.forget(args.entity);
  }

  afterUpdate(args: EventArgs<Watched>): void {
    this.forget(args.entity);
  }

  afterDelete(args: EventArgs<Watched>): void {
    this.forget(args.entity);
  }

  private forget(entity: Watched): void {
    if (entity instanceof VirtualDevice) {
      // By id covers the old address; by address covers a cached "unknown" for the new one.
      this.cache.invalidateDevice({
        id: entity.id,
        connectorId: entity.connector?.id ?? null,
        deviceKey: entity.deviceId,
      });
      // A cached "unknown" for its EUI, which LoRaWAN packets may name it by.
      if (entity.devEui && entity.connector)
        this.cache.invalidateDevice({ connectorId: entity.connector.id, deviceKey: entity.devEui });
    } else if (entity instanceof DeviceDriver) {
      this.cache.invalidateDriver(entity.id);
    } else {
      this.cache.invalidateConnector(entity.id);
    }
  }
}
