import { api } from '../../api/client';
import type { Reply } from '../../api/generated';

/**
 * The connector kinds as the server describes them (`GET /xapi/v1/connector-kinds`,
 * docs/adr/0074-connector-kind-descriptors.md) and the lists the console used to write by hand,
 * derived from their capabilities. Pure but for `loadConnectorKinds`, so the derivations are
 * unit-tested without a browser.
 */

export type ConnectorKindInfo = Reply<'GET /xapi/v1/connector-kinds'>['data'][number];
export type OutgoingMessageKind = NonNullable<ConnectorKindInfo['delivers']>;

let catalogue: Promise<ConnectorKindInfo[]> | null = null;

/** The kinds, fetched once while the page lives (they change only with the server version). */
export function loadConnectorKinds(): Promise<ConnectorKindInfo[]> {
  if (!catalogue) {
    catalogue = api.call('GET /xapi/v1/connector-kinds', {}).then((reply) => reply.data);
    catalogue.catch(() => (catalogue = null));
  }
  return catalogue;
}

/** Kinds that do something (planned kinds, with no capabilities, are stored only and not offered). */
export const creatableKinds = (kinds: readonly ConnectorKindInfo[], direction: 'incoming' | 'outgoing') =>
  kinds.filter((k) => k.direction === direction && k.capabilities.length > 0).map((k) => k.type);

/**
 * What a kind's connector issues and all its devices share: a broker password or a webhook URL, or
 * null for kinds that issue none.
 */
export const issuedCredential = (kind: Pick<ConnectorKindInfo, 'capabilities'> | undefined) =>
  kind?.capabilities.includes('broker')
    ? 'password'
    : kind?.capabilities.includes('webhook')
      ? 'webhook'
      : null;

/** Kinds whose connectors get credentials that are shown once: a broker login or a webhook URL. */
export const issuesCredentials = (kind: Pick<ConnectorKindInfo, 'capabilities'> | undefined) =>
  issuedCredential(kind) !== null;

/** Kinds that deliver one kind of outgoing message (what a rule command or a mail picker needs). */
export const kindsDelivering = (kinds: readonly ConnectorKindInfo[], message: OutgoingMessageKind) =>
  kinds.filter((k) => k.delivers === message).map((k) => k.type);

/** What each outgoing rule command sends; the connectors it may use are the kinds delivering that. */
export const COMMAND_MESSAGE: Record<string, OutgoingMessageKind> = {
  webhook: 'http',
  email: 'mail',
  'mqtt-publish': 'mqtt',
};
