import { EntitySchema } from '@mikro-orm/core';
import { newId } from '../platform/crypto/ids.js';

export interface UiSettings {
  colorTheme?: string;
  systemUiTheme?: 'light' | 'dark' | 'system';
  systemFonts?: boolean;
  /** The console map's basemap: a style URL or a `.pmtiles` file URL; unset: the offline basemap. */
  mapStyleUrl?: string | null;
  [key: string]: unknown;
}

/**
 * Who saved an OAuth configuration and the (expanded) permissions they held then: a federated
 * login never logs in or creates a user holding more (docs/adr/0030).
 */
export interface OAuthConfigAuthor {
  kind: 'user' | 'apiKey';
  id: string;
  permissions: string[];
  savedAt: string;
}

/** Stored form: `client_secret` is sealed with the server's secret key. */
export interface StoredOAuthConfig {
  scope: string;
  auth_uri: string;
  client_id: string;
  token_uri: string;
  redirect_uri: string;
  client_secret_sealed: string;
  user_info_uri: string;
  issuer?: string;
  default_role?: string;
  /** The provider's `amr` claim counts as the second factor (docs/adr/0031); absent: false. */
  trust_provider_mfa?: boolean;
  /** Absent on configurations saved before authors were recorded: those must be saved again. */
  author?: OAuthConfigAuthor;
}

export class Account {
  id: string = newId();
  parent: Account | null = null;
  /** Ids from the root down to and including this account; subtree checks are one `= ANY(path)`. */
  path: string[] = [];
  hierarchyLevel = 0;
  title!: string;
  description: string | null = null;
  mandatoryTwoFactor = false;
  retentionMonths = 24;
  /** IANA zone for calendar periods (time-aggregated states) and time rules. */
  timeZone = 'UTC';
  uiSettings: UiSettings = {};
  metaInfo: Record<string, unknown> = {};
  modules: Record<string, unknown> = {};
  oauthConfig: StoredOAuthConfig | null = null;
  createdAt: Date = new Date();
  updatedAt: Date = new Date();
}

export const AccountSchema = new EntitySchema<Account>({
  class: Account,
  tableName: 'accounts',
  properties: {
    id: { type: 'uuid', primary: true },
    parent: { kind: 'm:1', entity: () => Account, nullable: true, deleteRule: 'restrict', index: true },
    path: { type: 'text[]', columnType: 'uuid[]' },
    hierarchyLevel: { type: 'integer' },
    title: { type: 'string', length: 200 },
    description: { type: 'text', nullable: true },
    mandatoryTwoFactor: { type: 'boolean', default: false },
    retentionMonths: { type: 'double', default: 24 },
    timeZone: { type: 'string', length: 64, default: 'UTC' },
    uiSettings: { type: 'json' },
    metaInfo: { type: 'json' },
    modules: { type: 'json' },
    oauthConfig: { type: 'json', nullable: true },
    createdAt: { type: 'datetime', columnType: 'timestamptz' },
    updatedAt: { type: 'datetime', columnType: 'timestamptz', onUpdate: () => new Date() },
  },
});
