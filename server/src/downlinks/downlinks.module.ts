import type { AppContext } from '../context.js';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import type { NetworkEvents } from '../connectors/network-events.js';
import type { VirtualDeviceService } from '../devices/virtual-device.service.js';
import type { DriverParsing } from '../drivers/driver-parsing.service.js';
import { DeviceLifecycle } from '../devices/device-lifecycle.js';
import { DownlinkQueue } from './downlink-queue.js';
import { RemoteDeletions } from './remote-deletion.js';
import { DownlinkService } from './downlink.service.js';

/**
 * The downlink queue (its service, the worker that delivers, the network-server events it follows)
 * and remote device deletion, both through the connector kinds' network-server runtime.
 */
export function createDownlinks(
  ctx: AppContext,
  deps: {
    virtualDevices: VirtualDeviceService;
    connectorKinds: ConnectorKinds;
    driverParsing: DriverParsing;
    networkEvents: NetworkEvents;
  },
) {
  const downlinks = new DownlinkService(
    ctx.em,
    deps.virtualDevices,
    deps.connectorKinds,
    deps.driverParsing,
    ctx.clock,
  );
  const downlinkQueue = new DownlinkQueue({
    orm: ctx.orm,
    kinds: deps.connectorKinds,
    clock: ctx.clock,
    log: ctx.log,
  });
  downlinks.dueListeners.push(() => downlinkQueue.wake());
  deps.networkEvents.onDownlink(async (event) => {
    await downlinks.applyEvent(event);
  });
  const remoteDeletions = new RemoteDeletions({
    devices: new DeviceLifecycle(ctx.em),
    kinds: deps.connectorKinds,
    log: ctx.log,
  });
  deps.virtualDevices.remoteDeletionListeners.push((id) => remoteDeletions.request(id));
  ctx.lifecycle.push(downlinkQueue, remoteDeletions);
  return { downlinks, downlinkQueue, remoteDeletions };
}
