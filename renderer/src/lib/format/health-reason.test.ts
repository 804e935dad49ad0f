import { describe, expect, it } from 'vitest';
import { healthReasonText } from './health-reason';
import { de } from '../../i18n/de';
import { en } from '../../i18n/en';

describe('health reasons', () => {
  it('reads every reason the server writes in the console language, and others as they are', () => {
    const german = de.devices.health.reasons;
    expect(healthReasonText('no health rules', german)).toBe('keine Gesundheitsregeln');
    expect(healthReasonText('no rule matched', german)).toBe('keine Regel trifft zu');
    expect(healthReasonText('no packet received', german)).toBe('noch kein Paket empfangen');
    expect(healthReasonText('no packet for more than 3600 s', german)).toBe('seit über 3600 s kein Paket');
    expect(healthReasonText('rule 0: battery < 20', german)).toBe('Regel 1: battery < 20');
    expect(healthReasonText('rule 2: status == "fault"', en.devices.health.reasons)).toBe(
      'rule 3: status == "fault"',
    );
    expect(healthReasonText('something newer', german)).toBe('something newer');
    expect(healthReasonText(null, german)).toBe('—');
  });
});
