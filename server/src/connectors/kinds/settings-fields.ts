import { Type, type TSchema } from 'typebox';
import { MAX_RETRY_DELAY_MS } from '../../outgoing/delivery.js';

/**
 * TypeBox building blocks of the kinds' settings schemas. A secret is `writeOnly` (sealed when
 * stored, `********` when read; sending the mask back keeps it, `null` or `""` removes it).
 */

export const text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });

export const secret = (maxLength: number, description?: string) =>
  Type.Union([Type.String({ maxLength }), Type.Null()], {
    writeOnly: true,
    ...(description ? { description } : {}),
  });

export const integer = (minimum: number, maximum: number, description?: string) =>
  Type.Integer({ minimum, maximum, ...(description ? { description } : {}) });

export const oneOf = <T extends string | number>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

export const flag = (description?: string) => Type.Boolean(description ? { description } : {});

/** TLS towards an external server: CA, client certificate and (secret) key. */
export const tlsFields = (): Record<string, TSchema> => ({
  serverCa: text(20_000, 'PEM of the CA that signed the server certificate'),
  clientCert: text(20_000, 'PEM client certificate (with clientKey)'),
  clientKey: secret(20_000, 'PEM private key of clientCert'),
  rejectUnauthorized: flag('false accepts self-signed or otherwise unverifiable server certificates'),
});

/** The outgoing dispatcher's per-connector queue and retry settings (outgoing/delivery.ts). */
export const deliveryFields = (): Record<string, TSchema> => ({
  queueSize: integer(1, 100_000, 'Messages queued at most'),
  overflow: oneOf(['drop-newest', 'drop-oldest'], 'Which message a full queue drops'),
  maxAttempts: integer(1, 20, 'Delivery attempts per message'),
  retryDelayMs: integer(10, MAX_RETRY_DELAY_MS, 'First retry delay; doubles per attempt'),
});

export const settingsObject = (properties: Record<string, TSchema>, required: string[] = []) =>
  Type.Object(
    Object.fromEntries(
      Object.entries(properties).map(([k, v]) => [k, required.includes(k) ? v : Type.Optional(v)]),
    ),
  );
