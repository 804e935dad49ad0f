import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { DialOut } from './dial-out.js';

/**
 * nodemailer SMTP transports for tenant-set mail servers. nodemailer takes the connected socket
 * from `getSocket` and does TLS itself on it (implicit TLS or STARTTLS, with the transport's `tls`
 * settings). Its OAuth 2.0 token request would be a connection of its own, so an OAuth2 login
 * must bring a `provisionCallback` that fetches the token through DialOut.
 */
export function guardedSmtp(
  dial: DialOut,
  options: Omit<SMTPTransport.Options, 'getSocket' | 'url' | 'service'>,
): Transporter {
  const auth = options.auth as { type?: string; provisionCallback?: unknown } | undefined;
  if (auth?.type?.toUpperCase() === 'OAUTH2' && typeof auth.provisionCallback !== 'function') {
    throw new Error(
      'an OAuth2 login needs a provisionCallback that reaches the token endpoint through DialOut',
    );
  }
  const connectionTimeout = options.connectionTimeout ?? 10_000;
  return nodemailer.createTransport({
    ...options,
    getSocket: (socketOptions, callback) => {
      const port = Number(socketOptions.port ?? (socketOptions.secure ? 465 : 587));
      const socket = dial.socket({ host: String(socketOptions.host ?? 'localhost'), port });
      const timer = setTimeout(
        () => socket.destroy(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' })),
        connectionTimeout,
      );
      const onError = (error: Error) => {
        clearTimeout(timer);
        callback(error);
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        // Until nodemailer listens itself, an error must not go unheard (that would end the process).
        socket.on('error', () => undefined);
        callback(null, { connection: socket });
      });
    },
  } as SMTPTransport.Options);
}
