import type { EntityManager } from '@mikro-orm/postgresql';

/** A device state's current value as the ingest path committed it (`device_states`). */
export interface CurrentDeviceValue {
  value: unknown;
  timestamp: Date;
}

/**
 * Reads of the devices domain's current device states for other domains, so they need not know
 * the table. Callers have checked that the caller may see what they ask for.
 */
export const deviceStateQueries = {
  /** The current value of `key` on one device (by its uuid), if it has one. */
  async ofDevice(em: EntityManager, deviceId: string, key: string): Promise<CurrentDeviceValue | undefined> {
    const rows = await em
      .getConnection()
      .execute<CurrentDeviceValue[]>(
        'SELECT value, timestamp FROM device_states WHERE device_id = ? AND key = ?',
        [deviceId, key],
      );
    return rows[0] ? { value: rows[0].value, timestamp: new Date(rows[0].timestamp) } : undefined;
  },

  /** The newest value of `key` among an account's devices with this `referenceId` (dynamic routing). */
  async ofReference(
    em: EntityManager,
    accountId: string,
    referenceId: string,
    key: string,
  ): Promise<CurrentDeviceValue | undefined> {
    const rows = await em.getConnection().execute<CurrentDeviceValue[]>(
      `SELECT s.value, s.timestamp
         FROM device_states s JOIN virtual_devices d ON d.id = s.device_id
        WHERE d.account_id = ? AND d.reference_id = ? AND s.key = ?
        ORDER BY s.timestamp DESC LIMIT 1`,
      [accountId, referenceId, key],
    );
    return rows[0] ? { value: rows[0].value, timestamp: new Date(rows[0].timestamp) } : undefined;
  },
};
