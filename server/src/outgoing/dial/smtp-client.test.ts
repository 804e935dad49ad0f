import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, describe, expect, it } from 'vitest';
import { TargetGuard, TargetRefusedError } from '../target-guard.js';
import { DialOut } from './dial-out.js';

/**
 * nodemailer over DialOut's socket against a real SMTP server on loopback: nodemailer does the TLS
 * itself on the socket it is handed, implicitly or after STARTTLS (smtp-server's own self-signed
 * certificate, hence rejectUnauthorized: false).
 */

const log = pino({ enabled: false });
const servers: SMTPServer[] = [];

async function smtpServer(secure: boolean): Promise<{ port: number; received: string[] }> {
  const received: string[] = [];
  const server = new SMTPServer({
    secure,
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        received.push(`${session.secure ? 'tls' : 'plain'} ${session.envelope.rcptTo[0]?.address ?? ''}`);
        callback();
      });
    },
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.server.address() as AddressInfo).port, received };
}

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
});

const mail = { from: 'alarms@plant.test', to: 'ops@plant.test', subject: 's', text: 't' };

describe('DialOut.smtp', () => {
  const dial = new DialOut(new TargetGuard(['127.0.0.1']), log);

  it('delivers with implicit TLS and with STARTTLS', async () => {
    const implicit = await smtpServer(true);
    const starttls = await smtpServer(false);
    const tls = { rejectUnauthorized: false };
    await dial.smtp({ host: '127.0.0.1', port: implicit.port, secure: true, tls }).sendMail(mail);
    await dial.smtp({ host: '127.0.0.1', port: starttls.port, requireTLS: true, tls }).sendMail(mail);
    expect(implicit.received).toEqual(['tls ops@plant.test']);
    expect(starttls.received).toEqual(['tls ops@plant.test']);
  });

  it('refuses a private mail server before connecting', async () => {
    const strict = new DialOut(new TargetGuard([]), log);
    for (const host of ['10.1.2.3', '127.0.0.1']) {
      const failure = await strict
        .smtp({ host, port: 25 })
        .sendMail(mail)
        .catch((error: unknown) => error);
      expect(failure, host).toBeInstanceOf(TargetRefusedError);
    }
  });

  it('will not let nodemailer fetch OAuth tokens by itself', () => {
    expect(() =>
      dial.smtp({
        host: '127.0.0.1',
        auth: { type: 'OAuth2', user: 'u', refreshToken: 'r', accessUrl: 'http://10.0.0.1/token' },
      }),
    ).toThrow(/provisionCallback/);
  });
});
