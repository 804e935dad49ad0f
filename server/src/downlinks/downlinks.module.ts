import type { AppContext } from '../context.js';
import type { ConnectorKinds } from '../connectors/kinds/index.js';
import type { NetworkEvents } from '../connectors/network-events.js';
import type { VirtualDeviceService } from '../devices/virtual-device.service.js';
import type { DriverParsing } from '../drivers/driver-parsing.service.js';
import { DownlinkQueue } from './downlink-queue.js';
import { DownlinkService } from './downlink.service.js';

/** The downlink queue: its service, the worker that delivers, and the network-server events it follows. */
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
  ctx.lifecycle.push(downlinkQueue);
  return { downlinks, downlinkQueue };
}
