import { deKindSettings, type SettingText } from '../../i18n/de.kind-settings';
import type { SettingsField } from './settings-form';

/** Words of setting keys written as people write them. */
const WORDS: Record<string, string> = {
  api: 'API',
  ca: 'CA',
  eui: 'EUI',
  id: 'ID',
  ms: '(ms)',
  oauth2: 'OAuth 2.0',
  qos: 'QoS',
  sasl: 'SASL',
  ssl: 'SSL',
  tls: 'TLS',
  url: 'URL',
};

/** "deviceIdTopicSegment" → "Device ID topic segment": the label of a setting whose schema has no title. */
export const humanize = (key: string): string => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[-_]+/g, ' ')
    .toLowerCase()
    .split(' ')
    .map((word) => WORDS[word] ?? word)
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * A setting's label and help in the console's language: English from the kind's schema (`title`,
 * else the key in words; `description`), German from i18n/de.kind-settings.ts keyed by kind and
 * setting, falling back to the schema's text where a translation is missing.
 */
export function settingText(
  kind: string,
  field: Pick<SettingsField, 'key' | 'title' | 'description'>,
  /** The console's language (`en`, `de`). */
  language: string,
): SettingText {
  const english = {
    label: field.title ?? humanize(field.key),
    ...(field.description ? { help: field.description } : {}),
  };
  const translated = language === 'de' ? deKindSettings[kind]?.[field.key] : undefined;
  return translated ? { label: translated.label, help: translated.help ?? english.help } : english;
}
