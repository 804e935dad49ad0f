import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The message as received, headers and body. */
  raw: string;
  /** The raw message with quoted-printable soft breaks and escapes undone, so links read whole. */
  decoded: string;
}

export interface TestSmtpServer {
  /** `smtp://user:pass@127.0.0.1:<port>` for STELLWERK_SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /** Resolves with the first mail to `to` (already received or arriving within `timeoutMs`). */
  waitFor(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

const USER = 'stellwerk';
const PASS = 'smtp test password';

const decodeQuotedPrintable = (text: string): string =>
  text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * A real SMTP server on a free loopback port, requiring the credentials from its URL. STARTTLS
 * is off because the test has no certificate the client would trust.
 */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const waiters: Array<{ to: string; resolve: (mail: ReceivedMail) => void }> = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === USER && auth.password === PASS) callback(null, { user: USER });
      else callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          decoded: decodeQuotedPrintable(raw),
        };
        received.push(mail);
        for (const w of waiters.filter((w) => mail.to.includes(w.to))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(mail);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${USER}:${encodeURIComponent(PASS)}@127.0.0.1:${port}`,
    received,
    waitFor(to, timeoutMs = 10_000) {
      const already = received.find((m) => m.to.includes(to));
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ to, resolve: (mail) => (clearTimeout(timer), resolve(mail)) });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
