import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../auth/principal.js';
import { DeviceDriver, type HealthConfig } from '../../drivers/device-driver.entity.js';
import { errors } from '../../platform/errors.js';
import { scheduleProblem, type Schedule } from '../../platform/schedule.js';
import { checkHealthConfig } from '../device-references.js';
import { HEALTH_UNKNOWN, type VirtualDevice } from '../virtual-device.entity.js';
import type { VirtualDeviceService } from '../virtual-device.service.js';
import type { DeviceHealthEvaluator } from './device-health.evaluator.js';
import {
  dailySlotMs,
  healthMode,
  nextHealthCheck,
  pinnedDailySchedule,
  slotTimeOfDay,
  type HealthMode,
} from './health-evaluation.js';

/** What a user sets for one device (PUT /virtual-devices/{id}/health). */
export interface ManualHealthInput {
  rules?: HealthConfig['rules'];
  silentAfterSeconds?: number | null;
  alarmOnChange?: boolean;
  schedule?: { cron?: string; intervalSeconds?: number };
}

export interface DeviceHealthView {
  deviceId: string;
  healthState: string;
  healthReason: string | null;
  healthCheckedAt: string | null;
  healthNextCheckAt: string | null;
  mode: HealthMode;
  /** The rules in force: the device's own (manual) or its driver's (default); null: none. */
  config: HealthConfig | null;
  schedule: Schedule | null;
  /** The device's daily slot (UTC), where default rules are evaluated. */
  dailySlot: string;
}

/**
 * A device's health and its own (manual) health rules. Callers have checked
 * `VirtualDevice.read` / `virtualDevice.manage`; the device must be reachable and visible to the
 * principal (VirtualDeviceService.get: 404 otherwise).
 */
export class DeviceHealthService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly devices: VirtualDeviceService,
    private readonly evaluator: DeviceHealthEvaluator,
    private readonly clock: () => Date,
  ) {}

  private async driverOf(device: VirtualDevice): Promise<DeviceDriver | null> {
    return device.driver ? this.em().findOne(DeviceDriver, { id: device.driver.id }) : null;
  }

  private async viewOf(device: VirtualDevice): Promise<DeviceHealthView> {
    const driver = await this.driverOf(device);
    return {
      deviceId: device.id,
      // No packet yet: Unknown is the only health a device can have (spec, States and transitions).
      healthState: device.lastSeen ? device.healthState : HEALTH_UNKNOWN,
      healthReason: device.healthReason,
      healthCheckedAt: device.healthCheckedAt?.toISOString() ?? null,
      healthNextCheckAt: device.healthNextCheckAt?.toISOString() ?? null,
      mode: healthMode({ ownConfig: device.healthConfig, schedule: device.healthSchedule }),
      config: device.healthConfig ?? driver?.healthConfig ?? null,
      schedule: device.healthSchedule,
      dailySlot: slotTimeOfDay(dailySlotMs(device.id)),
    };
  }

  async get(principal: Principal, id: string): Promise<DeviceHealthView> {
    return this.viewOf(await this.devices.get(principal, id));
  }

  /**
   * Gives the device its own health rules (editing the driver's defaults makes them manual):
   * omitted parts are taken from the rules in force; without a schedule the device keeps the
   * daily time it had (every 24 h from its slot) instead of being spread again.
   */
  async setManual(principal: Principal, id: string, input: ManualHealthInput): Promise<DeviceHealthView> {
    const device = await this.devices.get(principal, id);
    const driver = await this.driverOf(device);
    const base = device.healthConfig ?? driver?.healthConfig ?? { rules: [] };
    const config: HealthConfig = { rules: input.rules ?? base.rules };
    const silent =
      input.silentAfterSeconds === undefined ? base.silentAfterSeconds : input.silentAfterSeconds;
    if (silent !== null && silent !== undefined) config.silentAfterSeconds = silent;
    const alarmOnChange = input.alarmOnChange ?? base.alarmOnChange;
    if (alarmOnChange !== undefined) config.alarmOnChange = alarmOnChange;
    const checked = checkHealthConfig(config, driver?.targetVariables);
    const now = this.clock();
    let schedule: Schedule;
    let anchor: Date;
    if (input.schedule) {
      const problem = scheduleProblem(input.schedule, device.account.timeZone);
      if (problem) {
        throw errors.unprocessable('INVALID_HEALTH_SCHEDULE', `Invalid health schedule: ${problem}`, [
          { path: '/schedule', message: problem },
        ]);
      }
      schedule = input.schedule;
      anchor = now;
    } else if (device.healthSchedule) {
      schedule = device.healthSchedule;
      anchor = device.healthScheduleAnchor ?? now;
    } else ({ schedule, anchor } = pinnedDailySchedule(device.id, now));
    device.healthConfig = checked;
    device.healthSchedule = schedule;
    device.healthScheduleAnchor = anchor;
    device.healthNextCheckAt = nextHealthCheck(
      { deviceId: device.id, ownConfig: checked, schedule, anchor, timeZone: device.account.timeZone },
      now,
    );
    await this.em().flush();
    return this.viewOf(device);
  }

  /** Back to the driver's rules, evaluated in the device's daily slot. */
  async reset(principal: Principal, id: string): Promise<DeviceHealthView> {
    const device = await this.devices.get(principal, id);
    device.healthConfig = null;
    device.healthSchedule = null;
    device.healthScheduleAnchor = null;
    device.healthNextCheckAt = nextHealthCheck(
      { deviceId: device.id, ownConfig: null, schedule: null, anchor: null, timeZone: 'UTC' },
      this.clock(),
    );
    await this.em().flush();
    return this.viewOf(device);
  }

  /** Evaluates now; the schedule stays as it is. */
  async evaluateNow(principal: Principal, id: string): Promise<DeviceHealthView> {
    const device = await this.devices.get(principal, id);
    await this.evaluator.evaluate([device.id], this.clock(), false);
    await this.em().refresh(device);
    return this.viewOf(device);
  }
}
