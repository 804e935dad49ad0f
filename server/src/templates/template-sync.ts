import type { EntityManager } from '@mikro-orm/postgresql';
import type { VirtualDevice } from '../devices/virtual-device.entity.js';
import type { JobHandler } from '../jobs/job.types.js';
import type { DeviceTemplate } from './device-template.entity.js';

/**
 * What a template contributes to its devices, in one place for the in-memory path (link, create)
 * and the SQL path (the sync job): tags and groups are unioned (device order first), keyValueData
 * merged with the template's keys winning, driver and health config taken from the template
 * when it has them.
 */
export function applyTemplate(device: VirtualDevice, template: DeviceTemplate): void {
  device.tags = union(device.tags, template.tags);
  device.groups = union(device.groups, template.groups);
  device.keyValueData = { ...device.keyValueData, ...template.keyValueData };
  if (template.driver) device.driver = template.driver;
  if (template.healthConfig) device.healthConfig = template.healthConfig;
}

const union = (a: string[], b: string[]) => [...new Set([...a, ...b])];

const ORDERED_UNION = (column: string) =>
  `ARRAY(SELECT x FROM unnest(d.${column} || t.${column}) WITH ORDINALITY u(x, i) GROUP BY x ORDER BY min(i))`;

const SYNC_SQL = `
  UPDATE virtual_devices d SET
     tags = ${ORDERED_UNION('tags')},
     groups = ${ORDERED_UNION('groups')},
     key_value_data = d.key_value_data || t.key_value_data,
     driver_id = coalesce(t.driver_id, d.driver_id),
     health_config = coalesce(t.health_config, d.health_config),
     updated_at = now()
    FROM device_templates t
   WHERE t.id = ? AND d.template_id = t.id`;

export const TEMPLATE_SYNC_JOB = 'template-sync';

/** Synchronises a template to all linked devices. Idempotent, so a lost node's run is retried. */
export const templateSyncJob: JobHandler = {
  type: TEMPLATE_SYNC_JOB,
  retryable: true,
  async run(ctx) {
    const templateId = ctx.job.subjectId!;
    const result = await syncTemplate(ctx.em, templateId);
    ctx.setTotal(result);
    ctx.advance(result);
    return { devicesUpdated: result };
  },
};

export async function syncTemplate(em: EntityManager, templateId: string): Promise<number> {
  const result = await em.getConnection().execute(SYNC_SQL, [templateId], 'run');
  return (result as { affectedRows?: number }).affectedRows ?? 0;
}
