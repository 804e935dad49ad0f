import { Type } from 'typebox';
import { ListQuery, Timestamp, Uuid } from '../platform/http/schemas.js';

const Json = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 100 });

export const UiSettings = Type.Object(
  {
    colorTheme: Type.Optional(
      Type.String({
        maxLength: 50,
        description:
          'Accent palette of the console (blue, teal, violet, amber, green; other names show the default). Inherited by sub-accounts.',
      }),
    ),
    systemUiTheme: Type.Optional(
      Type.Union([Type.Literal('light'), Type.Literal('dark'), Type.Literal('system')], {
        description: 'Light or dark console (a user may override it). Inherited by sub-accounts.',
      }),
    ),
    systemFonts: Type.Optional(
      Type.Boolean({
        description: "true: the console uses the operating system's fonts. Inherited by sub-accounts.",
      }),
    ),
    mapStyleUrl: Type.Optional(
      Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
        description:
          'Basemap of the console map: a MapLibre style URL (http(s) or a path on this server, e.g. /maps/style.json) or a .pmtiles file URL; empty or null: the bundled offline basemap. Inherited by sub-accounts.',
      }),
    ),
  },
  { additionalProperties: true, maxProperties: 50 },
);

const HttpUrl = Type.String({ minLength: 1, maxLength: 2000 });

export const OAuthConfig = Type.Object({
  scope: Type.String({ minLength: 1, maxLength: 500 }),
  auth_uri: HttpUrl,
  client_id: Type.String({ minLength: 1, maxLength: 500 }),
  token_uri: HttpUrl,
  redirect_uri: HttpUrl,
  client_secret: Type.Optional(
    Type.String({ minLength: 1, maxLength: 2000, description: 'Write-only; replies show ********.' }),
  ),
  user_info_uri: HttpUrl,
  issuer: Type.Optional(HttpUrl),
  default_role: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'Built-in role given to users created at their first federated login (default AccountReader); only a role whose permissions you hold.',
    }),
  ),
  trust_provider_mfa: Type.Optional(
    Type.Boolean({
      description:
        "Default false. true: a login whose `amr` claim reports multi-factor authentication counts as the second factor of users with two-factor authentication; otherwise they enter their Stellwerk code after the provider's login.",
    }),
  ),
});

const RetentionMonths = Type.Union(
  [Type.Number({ exclusiveMinimum: 0, maximum: 1200 }), Type.String({ maxLength: 20 })],
  {
    description: 'Months; a decimal comma is accepted ("12,5").',
  },
);

const AccountFields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])),
  mandatoryTwoFactor: Type.Optional(Type.Boolean()),
  retentionMonths: Type.Optional(RetentionMonths),
  timeZone: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone (e.g. Europe/Berlin) for calendar periods and time rules; default UTC.',
    }),
  ),
  uiSettings: Type.Optional(UiSettings),
  metaInfo: Type.Optional(Json),
  modules: Type.Optional(Json),
  oauthConfig: Type.Optional(
    Type.Union([OAuthConfig, Type.Null()], {
      description:
        'Federated login provider; null removes it. Setting or removing it needs identityProvider.manage (403 NO_PERMISSION_IDENTITYPROVIDER.MANAGE).',
    }),
  ),
};

export const AccountCreate = Type.Object(
  { ...AccountFields, parentId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
export const AccountUpdate = Type.Partial(Type.Object({ ...AccountFields, parentId: Type.Optional(Uuid) }), {
  additionalProperties: false,
});

export const AccountReply = Type.Object({
  id: Uuid,
  parentId: Type.Union([Uuid, Type.Null()], {
    description: 'null for the root account and for an account whose parent lies above the caller’s account',
  }),
  hierarchyLevel: Type.Integer(),
  title: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  mandatoryTwoFactor: Type.Boolean(),
  retentionMonths: Type.Number(),
  timeZone: Type.String(),
  uiSettings: Type.Record(Type.String(), Type.Unknown()),
  effectiveUiSettings: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'uiSettings with colorTheme, systemUiTheme, systemFonts and mapStyleUrl taken from the nearest account that sets them (the account itself first); sub-accounts take them over',
    }),
  ),
  metaInfo: Type.Record(Type.String(), Type.Unknown()),
  modules: Type.Record(Type.String(), Type.Unknown()),
  oauthConfig: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AccountListQuery = Type.Object(
  { ...ListQuery, parentId: Type.Optional(Uuid) },
  { additionalProperties: false },
);

const Severity = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('critical')]);

export const AnnouncementCreate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    message: Type.String({ maxLength: 10_000 }),
    severity: Type.Optional(Severity),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const AnnouncementUpdate = Type.Partial(AnnouncementCreate, { additionalProperties: false });

export const AnnouncementReply = Type.Object({
  id: Uuid,
  accountId: Type.Union([Uuid, Type.Null()], {
    description: 'null for announcements inherited from an account above yours',
  }),
  title: Type.String(),
  message: Type.String(),
  severity: Severity,
  active: Type.Boolean(),
  inherited: Type.Optional(Type.Boolean()),
  dismissed: Type.Optional(Type.Boolean()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const AnnouncementStateUpdate = Type.Object(
  { dismissed: Type.Boolean() },
  { additionalProperties: false },
);
