import type { AppContext } from '../../context.js';
import type { IngestPipeline } from '../../ingest/pipeline.js';
import { LeaderTimer } from '../../platform/leader-timer.js';
import type { VirtualDeviceService } from '../virtual-device.service.js';
import { DeviceHealthEvaluator, type HealthAlarmWriter } from './device-health.evaluator.js';
import { DeviceHealthQueue } from './device-health.queue.js';
import { DeviceHealthService } from './device-health.service.js';

export const DEVICE_HEALTH_LOCK = 0x4845_4c54; // "HELT"
/** Scheduler rounds: a slot is met within this much (docs/device-health.md). */
const ROUND_MS = 10_000;

/**
 * Device health, wired: the evaluator; the scheduler (one node via the leader timer) for slots
 * and manual schedules; the prompt queue fed by the ingest pipeline's processed listener; the
 * service behind the routes. Scheduler and queue are lifecycle parts (not started in tests).
 */
export function createDeviceHealth(
  ctx: AppContext,
  deps: { virtualDevices: VirtualDeviceService; alarms: HealthAlarmWriter; ingest: IngestPipeline },
) {
  const deviceHealthEvaluator = new DeviceHealthEvaluator({
    orm: ctx.orm,
    alarms: deps.alarms,
    log: ctx.log,
  });
  const deviceHealthQueue = new DeviceHealthQueue({
    orm: ctx.orm,
    evaluator: deviceHealthEvaluator,
    clock: ctx.clock,
    log: ctx.log,
    metrics: ctx.metrics,
  });
  deps.ingest.onProcessed((updates) => deviceHealthQueue.offer(updates.map((u) => u.deviceId)));
  const deviceHealthScheduler = new LeaderTimer('device-health-scheduler', {
    databaseUrl: String(ctx.orm.config.get('clientUrl')),
    lockKey: DEVICE_HEALTH_LOCK,
    everyMs: ROUND_MS,
    clock: ctx.clock,
    log: ctx.log,
    round: (now) => deviceHealthEvaluator.runDue(now),
  });
  const deviceHealth = new DeviceHealthService(ctx.em, deps.virtualDevices, deviceHealthEvaluator, ctx.clock);
  ctx.lifecycle.push(deviceHealthScheduler, deviceHealthQueue);
  return { deviceHealth, deviceHealthEvaluator, deviceHealthQueue, deviceHealthScheduler };
}
