import { describe, expect, it } from 'vitest';
import { invitationMail } from './invitation.mail.js';

describe('invitationMail', () => {
  const link = 'https://iot.example.com/invitation?token=abc_DEF-123';
  const expiresAt = new Date('2030-01-08T10:15:00Z');

  it('carries the link whole in text and HTML, with the expiry', () => {
    const mail = invitationMail({ name: 'Ada', email: 'ada@example.com', link, expiresAt });
    expect(mail.subject).toBe('Your Stellwerk invitation');
    expect(mail.text).toContain(`\n${link}\n`);
    expect(mail.text).toContain('Hello Ada,');
    expect(mail.text).toContain('2030-01-08 10:15 UTC');
    expect(mail.html).toContain(`href="${link}"`);
  });

  it('escapes names in the HTML part', () => {
    const mail = invitationMail({ name: '<script>x</script>', email: 'a@b.c', link, expiresAt });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&#60;script&#62;');
  });
});
