import { describe, expect, it } from 'vitest';
import { humanize, settingText } from './setting-texts';

describe('connector setting texts', () => {
  it('falls back to the schema text where a translation is missing', () => {
    const field = { key: 'deviceIdTopicSegment', description: 'Topic level of the device id' };
    expect(settingText('mqtt-in', field, 'en')).toEqual({
      label: 'Device ID topic segment',
      help: 'Topic level of the device id',
    });
    expect(settingText('mqtt-in', field, 'de')).toEqual({
      label: 'Topic-Ebene der Geräte-ID',
      help: 'Ebene im Topic; negative Werte zählen vom Ende',
    });
    expect(settingText('some-new-kind', { ...field, title: 'Segment' }, 'de')).toEqual({
      label: 'Segment',
      help: 'Topic level of the device id',
    });
    expect(
      settingText('mqtt-in', { key: 'qos', description: 'At most once or at least once' }, 'de'),
    ).toEqual({
      label: 'QoS',
      help: 'At most once or at least once',
    });
    expect(humanize('oauth2ClientId')).toBe('OAuth 2.0 client ID');
    expect(humanize('timeoutMs')).toBe('Timeout (ms)');
  });
});
