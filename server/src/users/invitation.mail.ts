/** Text of the invitation mail; kept apart so wording changes never touch the service. */
export function invitationMail(input: { name: string; email: string; link: string; expiresAt: Date }) {
  const greeting = input.name ? `Hello ${input.name},` : 'Hello,';
  const until = input.expiresAt.toISOString().replace('T', ' ').slice(0, 16);
  const text = [
    greeting,
    '',
    `an account on Stellwerk has been created for ${input.email}.`,
    'Open this link to choose your password (it works once, until ' + `${until} UTC):`,
    '',
    input.link,
    '',
    'If you did not expect this mail, you can ignore it.',
  ].join('\n');
  const escape = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = [
    `<p>${escape(greeting)}</p>`,
    `<p>an account on Stellwerk has been created for ${escape(input.email)}.</p>`,
    `<p><a href="${escape(input.link)}">Choose your password</a> (the link works once, until ${until} UTC).</p>`,
    '<p>If you did not expect this mail, you can ignore it.</p>',
  ].join('\n');
  return { subject: 'Your Stellwerk invitation', text, html };
}
