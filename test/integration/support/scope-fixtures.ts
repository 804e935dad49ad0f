import { randomBytes } from 'node:crypto';
import { publishedDashboard } from './public-dashboard-probe.js';
import { rawBodyOf } from './raw-bodies.js';
import { created, uniq, type Call, type ScopeWorld } from './scope-world.js';
import type { TestApp } from './test-app.js';
import { FIXTURE_CODEC_PARSER } from './ts013-codecs.js';

/**
 * One fresh object of a kind in the scope world's account, for one probe call (so deleting or
 * changing it disturbs nothing else). Kinds bound to permission scopes are made visible to the
 * restricted user or hidden from it; the others ignore `hidden`.
 */
/** A gateway EUI no other fixture uses. */
export const randomEui = () => randomBytes(8).toString('hex');

export type ScopeFixture = (t: TestApp, w: ScopeWorld, hidden: boolean) => Promise<string>;

const area = (w: ScopeWorld, hidden: boolean) => (hidden ? w.scopes.south : w.scopes.north);
/** Objects that record their saver's scopes: the restricted user's are visible, the administrator's not. */
const savedBy = (w: ScopeWorld, hidden: boolean): Call => (hidden ? w.admin : w.as);

const twin = async (w: ScopeWorld, hidden: boolean) =>
  created(
    await w.admin('POST', '/xapi/v1/digital-twins', {
      title: `${hidden ? 'hidden' : 'visible'} ${uniq()}`,
      accountId: w.accountId,
      parentId: hidden ? w.parents.hidden : w.parents.visible,
    }),
  );

const connector = async (w: ScopeWorld, type = 'webhook-in') =>
  created(
    await w.admin('POST', '/xapi/v1/connectors', { type, title: `fx ${uniq()}`, accountId: w.accountId }),
  );

const smartGroup = async (w: ScopeWorld) =>
  created(
    await w.admin('POST', '/xapi/v1/smart-groups', {
      title: `fx ${uniq()}`,
      target: 'twin',
      accountId: w.accountId,
    }),
  );

export const SCOPE_FIXTURES: Record<string, ScopeFixture> = {
  digitalTwin: (_t, w, hidden) => twin(w, hidden),
  state: async (_t, w, hidden) =>
    created(
      await w.admin('POST', `/xapi/v1/digital-twins/${await twin(w, hidden)}/states`, {
        key: `k${uniq()}`,
        valueType: 'number',
      }),
    ),
  virtualDevice: async (_t, w, hidden) =>
    created(
      await w.admin('POST', '/xapi/v1/virtual-devices', {
        device_id: `fx-${uniq()}`,
        title: 'Fixture device',
        accountId: w.accountId,
        // A connector that delivers downlinks, so the device's downlink routes can succeed.
        connectorId: await connector(w, 'mqtt-broker'),
        permissionScopeId: area(w, hidden),
      }),
    ),
  rule: async (_t, w, hidden) =>
    created(
      await savedBy(w, hidden)('POST', '/xapi/v1/rules', {
        title: `fx ${uniq()}`,
        accountId: w.accountId,
        twinId: await twin(w, hidden),
        trigger: { type: 'time', schedule: { intervalSeconds: 3600 } },
        commands: [],
      }),
    ),
  alarmLog: async (t, w, hidden) =>
    (
      await t.services.alarmLogs.write({
        accountId: w.accountId,
        category: 'fixture',
        message: `fixture ${uniq()}`,
        reference: { type: 'digitalTwin', id: await twin(w, hidden) },
      })
    ).id,
  alarmReport: async (_t, w, hidden) =>
    created(
      await savedBy(w, hidden)('POST', `/xapi/v1/smart-groups/${await smartGroup(w)}/alarm-reports`, {
        title: `fx ${uniq()}`,
      }),
    ),
  exportPlan: async (_t, w, hidden) =>
    created(
      await savedBy(w, hidden)('POST', '/xapi/v1/export-plans', {
        title: `fx ${uniq()}`,
        accountId: w.accountId,
      }),
    ),
  // A finished run of a plan saved by the restricted user (visible) or by the unrestricted admin (hidden).
  exportJob: async (t, w, hidden) => {
    const plan = created(
      await savedBy(w, hidden)('POST', '/xapi/v1/export-plans', {
        title: `fx ${uniq()}`,
        accountId: w.accountId,
      }),
    );
    const job = created(await w.admin('POST', `/xapi/v1/export-plans/${plan}/run`));
    await t.services.jobs.runner.runOnce();
    return job;
  },
  integrationFlow: async (_t, w, hidden) =>
    created(
      await savedBy(w, hidden)('POST', '/xapi/v1/integration-flows', {
        title: `fx ${uniq()}`,
        source: { type: 'alarms' },
        accountId: w.accountId,
      }),
    ),
  gateway: async (_t, w, hidden) =>
    created(
      await w.admin('POST', '/xapi/v1/gateways', {
        eui: randomEui(),
        accountId: w.accountId,
        permissionScopeId: area(w, hidden),
      }),
    ),
  // A restricted user sees only its own scopes; making one visible would change the user itself.
  permissionScope: async (_t, w, hidden) =>
    hidden
      ? created(
          await w.admin('POST', '/xapi/v1/permission-scopes', {
            title: `fx ${uniq()}`,
            accountId: w.accountId,
          }),
        )
      : w.scopes.north,

  // Not bound to permission scopes.
  account: async (_t, w) =>
    created(await w.admin('POST', '/xapi/v1/accounts', { title: `fx ${uniq()}`, parentId: w.accountId })),
  announcement: async (_t, w) =>
    created(
      await w.admin('POST', `/xapi/v1/accounts/${w.accountId}/announcements`, {
        title: 'Notice',
        message: 'm',
      }),
    ),
  // Restricted to north: a restricted user may change only users who see no more than itself.
  user: async (_t, w) =>
    created(
      await w.admin('POST', '/xapi/v1/users', {
        email: `fx-${uniq()}@stellwerk.test`,
        accountId: w.accountId,
        permissionScopeIds: [w.scopes.north],
        suppressInvitation: true,
      }),
    ),
  role: async (_t, w) =>
    created(
      await w.admin('POST', '/xapi/v1/roles', {
        name: `fx ${uniq()}`,
        permissions: ['user.read'],
        accountId: w.accountId,
      }),
    ),
  apiKey: async (_t, w) =>
    created(
      await w.admin('POST', '/xapi/v1/api-keys', {
        title: `fx ${uniq()}`,
        permissions: [],
        accountId: w.accountId,
      }),
    ),
  connector: (_t, w) => connector(w),
  deviceTemplate: async (_t, w) =>
    created(
      await w.admin('POST', '/xapi/v1/device-templates', { title: `fx ${uniq()}`, accountId: w.accountId }),
    ),
  deviceDriver: async (_t, w) =>
    created(
      // A codec, so that every driver route (the parser test, encoding a downlink) works on it.
      await w.admin('POST', '/xapi/v1/device-drivers', {
        title: `fx ${uniq()}`,
        accountId: w.accountId,
        parser: FIXTURE_CODEC_PARSER,
      }),
    ),
  job: async (_t, w) =>
    created(
      await w.admin('POST', '/xapi/v1/virtual-devices/import', {
        csv: `device_id,title\nfx-${uniq()},Imported`,
        accountId: w.accountId,
      }),
    ),
  dashboard: async (_t, w) =>
    created(await w.admin('POST', '/xapi/v1/dashboards', { title: `fx ${uniq()}`, accountId: w.accountId })),
  publicDashboard: async (t, w) => (await publishedDashboard(t, w.adminToken, w.accountId)).dashboardId,
  smartGroup: (_t, w) => smartGroup(w),
  // With its image, so that reading the image can succeed.
  sitePlan: async (_t, w) => {
    const id = created(
      await w.admin('POST', '/xapi/v1/site-plans', { title: `fx ${uniq()}`, accountId: w.accountId }),
    );
    const image = rawBodyOf('PUT /xapi/v1/site-plans/:id/image')!.payload.toString('base64');
    return created(await w.admin('PUT', `/xapi/v1/site-plans/${id}/image`, { imageBase64: image }));
  },
  connectorMonitoringRule: async (_t, w) =>
    created(
      await w.admin('POST', `/xapi/v1/connectors/${await connector(w)}/monitoring-rules`, {
        title: `fx ${uniq()}`,
        type: 'no-data',
        params: { windowSeconds: 60 },
      }),
    ),
  filter: async (_t, w) =>
    created(await w.admin('POST', '/xapi/v1/filters', { title: `fx ${uniq()}`, accountId: w.accountId })),
  transformer: async (_t, w) =>
    created(
      await w.admin('POST', '/xapi/v1/transformers', { title: `fx ${uniq()}`, accountId: w.accountId }),
    ),
};
