import { EntitySchema } from '@mikro-orm/core';

/** Instance-wide values such as the hashed onboarding token. */
export class SystemSetting {
  key!: string;
  value!: unknown;
  updatedAt: Date = new Date();
}

export const SystemSettingSchema = new EntitySchema<SystemSetting>({
  class: SystemSetting,
  tableName: 'system_settings',
  properties: {
    key: { type: 'string', length: 100, primary: true },
    value: { type: 'json' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
