import type { EntityManager } from '@mikro-orm/postgresql';
import type { AccountService } from '../accounts/account.service.js';
import { openAlarmsBySeverity } from '../alarms/alarm-figures.js';
import type { AlarmLog, AlarmSeverity } from '../alarms/alarm-log.entity.js';
import type { AlarmLogService } from '../alarms/alarm-log.service.js';
import { hasPermission, type Principal } from '../auth/principal.js';
import {
  connectorCounts,
  packetsPerMinute,
  type ConnectorCounts,
  type PacketMinute,
} from '../connectors/connector-figures.js';
import { devicesByHealth, type HealthCount } from '../devices/device-figures.js';
import type { VirtualDeviceService } from '../devices/virtual-device.service.js';
import type { Gateway } from '../gateways/gateway.entity.js';
import type { GatewayService } from '../gateways/gateway.service.js';

/** Recent alarm entries and offline gateways named on the overview. */
export const OVERVIEW_LIST_SIZE = 5;
const MINUTE_MS = 60_000;
const INGEST_MINUTES = 60;

/** Each part is present only when the principal holds its permission (PARTS). */
export interface Overview {
  accountId: string;
  generatedAt: Date;
  devices?: { total: number; byHealth: HealthCount[] };
  connectors?: ConnectorCounts;
  ingest?: { minutes: PacketMinute[]; packetsIn: number; packetsFailed: number };
  alarms?: { open: number; bySeverity: Record<AlarmSeverity, number>; recent: AlarmLog[] };
  gateways?: { total: number; offline: number; offlineList: Gateway[] };
}

/** The permission that includes each part; the console hides a tile the reply leaves out. */
export const PARTS = {
  devices: 'VirtualDevice.read',
  connectors: 'connector.read',
  ingest: 'connector.read',
  alarms: 'alarmLog.read',
  gateways: 'gateway.read',
} as const;

/**
 * The state of an account's site in one reply: devices by health, connectors by status, the
 * ingest rate of the last hour, open alarms by severity with the newest entries, offline gateways.
 * A part is computed only for a principal holding its permission; devices, alarms and gateways
 * are counted within the principal's permission scopes, like their lists. Every part answers from
 * an index or a small table (docs/overview.md has the query plans).
 */
export class OverviewService {
  constructor(
    private readonly em: () => EntityManager,
    private readonly accounts: AccountService,
    private readonly devices: VirtualDeviceService,
    private readonly alarmLogs: AlarmLogService,
    private readonly gateways: GatewayService,
    private readonly clock: () => Date,
  ) {}

  async get(principal: Principal, accountId: string | undefined): Promise<Overview> {
    const account = await this.accounts.actingAccount(principal, accountId);
    const now = this.clock();
    const may = (part: keyof typeof PARTS) => hasPermission(principal, PARTS[part]);
    const overview: Overview = { accountId: account.id, generatedAt: now };
    if (may('devices')) {
      const byHealth = await devicesByHealth(this.em(), this.devices, principal, account);
      overview.devices = { total: byHealth.reduce((sum, h) => sum + h.count, 0), byHealth };
    }
    if (may('connectors')) overview.connectors = await connectorCounts(this.em(), account.id);
    if (may('ingest')) {
      // The current minute is the last one: it fills up while the overview is open.
      const to = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
      const minutes = await packetsPerMinute(
        this.em(),
        account.id,
        new Date(to - INGEST_MINUTES * MINUTE_MS),
        new Date(to),
      );
      overview.ingest = {
        minutes,
        packetsIn: minutes.reduce((sum, m) => sum + m.packetsIn, 0),
        packetsFailed: minutes.reduce((sum, m) => sum + m.packetsFailed, 0),
      };
    }
    if (may('alarms')) {
      const bySeverity = await openAlarmsBySeverity(this.em(), principal, account);
      const recent = await this.alarmLogs.list(principal, firstPage('lastSeenAt'), {
        accountId: account.id,
        status: ['open', 'acknowledged'],
      });
      overview.alarms = {
        open: Object.values(bySeverity).reduce((sum, n) => sum + n, 0),
        bySeverity,
        recent: recent.data,
      };
    }
    if (may('gateways')) {
      const all = await this.gateways.list(
        principal,
        { ...firstPage('title'), pageSize: 1 },
        { accountId: account.id },
      );
      const offline = await this.gateways.list(principal, firstPage('lastSeenAt'), {
        accountId: account.id,
        status: 'offline',
      });
      overview.gateways = {
        total: all.meta.total,
        offline: offline.meta.total,
        offlineList: offline.data,
      };
    }
    return overview;
  }
}

const firstPage = (field: string) => ({
  page: 1,
  pageSize: OVERVIEW_LIST_SIZE,
  offset: 0,
  orderBy: [{ field, direction: 'desc' as const }],
  search: undefined,
});
