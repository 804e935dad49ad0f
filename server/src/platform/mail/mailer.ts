import nodemailer from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** `smtp`: handed to the SMTP server; `disabled`: no SMTP configured, nothing was sent. */
export type MailDelivery = 'smtp' | 'disabled';

export interface Mailer {
  /** False when no SMTP server is configured; callers then say in the log what they would have sent. */
  readonly enabled: boolean;
  /** Resolves once the SMTP server accepted the message; rejects when it refused or was unreachable. */
  send(message: MailMessage): Promise<MailDelivery>;
  close(): void;
}

export interface MailerOptions {
  smtpUrl: string | undefined;
  from: string;
  log: FastifyBaseLogger;
}

/**
 * Outgoing mail through one SMTP server, configured by URL (nodemailer parses user, password,
 * port, `smtps:` for implicit TLS and query options). Without a URL mail is switched off rather
 * than failing, so a fresh install works before anyone has set up SMTP.
 */
export function createMailer(options: MailerOptions): Mailer {
  if (!options.smtpUrl) {
    return { enabled: false, send: () => Promise.resolve('disabled'), close: () => {} };
  }
  // Bounded timeouts: a dead SMTP server must not hold an API request for minutes.
  const transport = nodemailer.createTransport({
    url: options.smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  return {
    enabled: true,
    async send(message) {
      const info = await transport.sendMail({ from: options.from, ...message });
      options.log.debug({ to: message.to, subject: message.subject, messageId: info.messageId }, 'mail sent');
      return 'smtp';
    },
    close: () => transport.close(),
  };
}
