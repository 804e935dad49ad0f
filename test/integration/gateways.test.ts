import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connector } from '../../server/src/connectors/connector.entity.js';
import type { StateUpdate } from '../../server/src/ingest/parse-packet.stage.js';
import { metaStates, type GatewayReception } from '../../server/src/ingest/packet-meta.js';
import { TestClock } from './support/auth.js';
import { bearer, caller, errorCode, expectStatus, login, userWithPermissions } from './support/identity.js';
import { processedPackets } from './support/ingest-fixtures.js';
import { lorawanFixture } from './support/lorawan.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * LoRaWAN gateways: CRUD with gateway.read/manage, status from uplink metadata and from network-
 * server events, offline by the clock with the connector-monitoring alarm, 24 h figures, devices
 * heard, and the import from The Things Stack and ChirpStack gateway lists (a fake network server
 * this test starts on loopback, asserting the documented request shapes).
 *
 * Receptions enter through the listener the gateways module registers on the ingest pipeline's
 * processed updates, called with StateUpdate batches whose `_meta.*` states come from metaStates()
 * of the reception in The Things Stack's documented uplink message (its `rx_metadata`).
 */

const clock = new TestClock();
let t: TestApp;
let call: ReturnType<typeof caller>;
let admin: ReturnType<typeof bearer>;
let packetSeq = 1n;

interface GatewayBody {
  id: string;
  eui: string;
  networkId: string | null;
  title: string;
  status: 'online' | 'offline';
  lastSeenAt: string | null;
  location: { latitude: number; longitude: number; altitude: number | null } | null;
  connectorId: string | null;
  uplinks24h: number;
  meanRssi24h: number | null;
  meanSnr24h: number | null;
}

/** `uplink_message.rx_metadata[0]` of The Things Stack's documented uplink webhook message. */
const DOC_RECEPTION = {
  gateway_ids: { gateway_id: 'gtw1', eui: '9C5C8E00001A05C4' },
  rssi: -35,
  snr: 5,
};

/** A processed batch as the ingest pipeline hands it to its listeners. */
function uplink(
  device: { id: string; accountId: string },
  receptions: GatewayReception[],
  at = clock.now(),
): StateUpdate {
  return {
    deviceId: device.id,
    accountId: device.accountId,
    permissionScopeId: null,
    packetId: packetSeq++,
    receivedAt: at,
    states: { _raw: '00', ...metaStates({ fPort: 1, gateways: receptions }) },
  };
}

async function receive(updates: StateUpdate[]): Promise<void> {
  t.services.gatewayReceptions.offer(updates);
  await t.services.gatewayReceptions.idle();
}

const getGateway = async (id: string) =>
  expectStatus<GatewayBody>(await call('GET', `/xapi/v1/gateways/${id}`), 200);

async function device(deviceId: string, connectorId: string): Promise<{ id: string; accountId: string }> {
  const body = expectStatus<{ id: string; accountId: string }>(
    await call('POST', '/xapi/v1/virtual-devices', { device_id: deviceId, title: deviceId, connectorId }),
    201,
  );
  return { id: body.id, accountId: body.accountId };
}

async function connector(type: string, config: Record<string, unknown> = {}): Promise<string> {
  const id = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/connectors', { type, title: `${type} ${packetSeq}` }),
    201,
  ).id;
  if (Object.keys(config).length > 0) {
    // API settings as the kinds store them: secrets sealed with the server key.
    const em = t.orm.em.fork();
    const row = await em.findOneOrFail(Connector, id);
    row.config = { ...row.config, ...config };
    await em.flush();
  }
  return id;
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A fake network server on loopback: answers each path with the given JSON, records every request. */
async function fakeNetworkServer(
  routes: Record<string, { body: unknown; headers?: Record<string, string> }>,
) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const route = routes[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(route ? 200 : 404, { 'content-type': 'application/json', ...route?.headers });
    res.end(JSON.stringify(route?.body ?? { message: 'not found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  t = await createTestApp({ clock: clock.now });
  admin = bearer(await login(t));
  call = caller(t, admin);
}, 60_000);

afterAll(() => t?.close());

describe('LoRaWAN gateways', () => {
  it('keeps gateways per account with the EUI lower-cased, behind gateway.read and gateway.manage', async () => {
    const created = expectStatus<GatewayBody>(
      await call('POST', '/xapi/v1/gateways', {
        eui: 'AA-BB-CC-DD-EE-FF-00-11',
        title: 'Roof north',
        tags: ['roof'],
        location: { latitude: 52.52, longitude: 13.405, altitude: 40 },
      }),
      201,
    );
    expect(created).toMatchObject({
      eui: 'aabbccddeeff0011',
      status: 'offline',
      lastSeenAt: null,
      location: { latitude: 52.52, longitude: 13.405, altitude: 40 },
      uplinks24h: 0,
      meanRssi24h: null,
    });
    const taken = await call('POST', '/xapi/v1/gateways', { eui: 'aabbccddeeff0011' });
    expect(taken.statusCode).toBe(409);
    expect(errorCode(taken)).toBe('GATEWAY_EUI_TAKEN');
    expect((await call('POST', '/xapi/v1/gateways', { eui: 'xyz' })).statusCode).toBe(400);

    const listed = expectStatus<{ data: GatewayBody[]; meta: { total: number } }>(
      await call('GET', '/xapi/v1/gateways?searchItems=EEFF00&sort=-title'),
      200,
    );
    expect(listed.data.map((g) => g.id)).toEqual([created.id]);
    expectStatus(await call('GET', '/xapi/v1/gateways?sort=-lastSeenAt,eui&status=offline'), 200);

    const reader = await userWithPermissions(t, admin, 'Gateway reader', ['gateway.read']);
    const asReader = caller(t, bearer(reader.token));
    expectStatus(await asReader('GET', `/xapi/v1/gateways/${created.id}`), 200);
    const refused = await asReader('PUT', `/xapi/v1/gateways/${created.id}`, { title: 'x' });
    expect(refused.statusCode).toBe(403);
    expect(errorCode(refused)).toBe('NO_PERMISSION_GATEWAY.MANAGE');

    const updated = expectStatus<GatewayBody>(
      await call('PUT', `/xapi/v1/gateways/${created.id}`, { title: 'Roof N', location: null }),
      200,
    );
    expect(updated).toMatchObject({ title: 'Roof N', location: null, eui: 'aabbccddeeff0011' });
    // A permission scope a gateway is in cannot be deleted: the gateway would lose its access area.
    const scope = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/permission-scopes', { title: 'Towers' }),
      201,
    ).id;
    expectStatus(await call('PUT', `/xapi/v1/gateways/${created.id}`, { permissionScopeId: scope }), 200);
    const blocked = await call('DELETE', `/xapi/v1/permission-scopes/${scope}`);
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json()).toMatchObject({
      error: { code: 'DELETE_BLOCKED', details: [{ type: 'gateway', id: created.id }] },
    });
    expect((await call('DELETE', `/xapi/v1/gateways/${created.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/xapi/v1/gateways/${created.id}`)).statusCode).toBe(404);
  });

  it('goes online from uplink metadata, offline by the clock, and writes the gateway-offline alarm', async () => {
    const tts = await connector('tts-uplink');
    const rule = expectStatus<{ id: string }>(
      await call('POST', `/xapi/v1/connectors/${tts}/monitoring-rules`, {
        title: 'Gateway down',
        type: 'gateway-offline',
        params: {},
      }),
      201,
    ).id;
    const gateway = expectStatus<GatewayBody>(
      await call('POST', '/xapi/v1/gateways', {
        eui: DOC_RECEPTION.gateway_ids.eui,
        networkId: DOC_RECEPTION.gateway_ids.gateway_id,
        title: 'Documentation gateway',
        connectorId: tts,
        location: { latitude: 48.1, longitude: 11.6 },
      }),
      201,
    );
    expect(gateway.eui).toBe('9c5c8e00001a05c4');
    const meter = await device('meter-1', tts);
    const heat = await device('heat-1', tts);

    // The documentation uplink's reception (upper-case EUI) and one known only by its TTS gateway id.
    const doc: GatewayReception = {
      gatewayId: DOC_RECEPTION.gateway_ids.gateway_id,
      gatewayEui: DOC_RECEPTION.gateway_ids.eui.toLowerCase(),
      rssi: DOC_RECEPTION.rssi,
      snr: DOC_RECEPTION.snr,
    };
    await receive([
      uplink(meter, [doc, { gatewayEui: '0016c001f153a14c', rssi: -110, snr: -3 }]),
      uplink(heat, [{ gatewayId: 'gtw1', rssi: -95, snr: 7 }]),
    ]);
    await receive([uplink(meter, [{ ...doc, rssi: -45, snr: 9 }])]);

    let seen = await getGateway(gateway.id);
    expect(seen).toMatchObject({ status: 'online', uplinks24h: 3, meanRssi24h: -58.3, meanSnr24h: 7 });
    const heard = expectStatus<{
      data: Array<{ device_id: string; rssi: number; snr: number; uplinks: number }>;
    }>(await call('GET', `/xapi/v1/gateways/${gateway.id}/devices`), 200);
    expect(heard.data.map((d) => [d.device_id, d.rssi, d.snr, d.uplinks]).sort()).toEqual([
      ['heat-1', -95, 7, 1],
      ['meter-1', -45, 9, 2],
    ]);
    // Not registered: not created, but listed as heard.
    const unknown = expectStatus<{ data: Array<{ eui: string; uplinks: number }> }>(
      await call('GET', '/xapi/v1/gateways/unknown'),
      200,
    );
    expect(unknown.data).toEqual([expect.objectContaining({ eui: '0016c001f153a14c', uplinks: 1 })]);

    // Within the window nothing changes; past it (default 10 min) the gateway goes offline once.
    expect(await t.services.gatewayStatus.round(new Date(clock.now().getTime() + 9 * 60_000))).toEqual([]);
    clock.advance(11 * 60_000);
    expect(await t.services.gatewayStatus.round(clock.now())).toEqual([gateway.id]);
    expect(await t.services.gatewayStatus.round(clock.now())).toEqual([]);
    seen = await getGateway(gateway.id);
    expect(seen.status).toBe('offline');

    const alarms = expectStatus<{ data: Array<Record<string, unknown>> }>(
      await call('GET', '/xapi/v1/alarm-logs?pageSize=100'),
      200,
    ).data.filter((a) => (a.source as { id: string }).id === rule);
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      category: 'Konnektorüberwachung',
      reference: { type: 'gateway', id: gateway.id },
      details: { ruleType: 'gateway-offline', gatewayEui: '9c5c8e00001a05c4' },
    });

    // The entry is about the gateway: a reader restricted to a scope sees it once the gateway is in that scope.
    const scope = expectStatus<{ id: string }>(
      await call('POST', '/xapi/v1/permission-scopes', { title: 'Roofs' }),
      201,
    ).id;
    const scoped = await userWithPermissions(t, admin, 'Roof reader', ['alarmLog.read'], {
      permissionScopeIds: [scope],
    });
    const scopedAlarms = async () =>
      expectStatus<{ data: Array<{ source: { id: string } }> }>(
        await caller(t, bearer(scoped.token))('GET', '/xapi/v1/alarm-logs?pageSize=100'),
        200,
      ).data.filter((a) => a.source.id === rule).length;
    expect(await scopedAlarms()).toBe(0);
    expectStatus(await call('PUT', `/xapi/v1/gateways/${gateway.id}`, { permissionScopeId: scope }), 200);
    expect(await scopedAlarms()).toBe(1);

    // A later uplink brings it back; a network server saying it is down takes it offline at once.
    await receive([uplink(meter, [doc])]);
    expect((await getGateway(gateway.id)).status).toBe('online');
    await t.services.networkEvents.emit([
      { type: 'gateway', connectorId: tts, gatewayEui: '9c5c8e00001a05c4', online: false, at: clock.now() },
    ]);
    expect((await getGateway(gateway.id)).status).toBe('offline');
    // Offline again while the first entry is still open: counted on it, not a second entry.
    const after = expectStatus<{ data: Array<{ source: { id: string }; occurrenceCount: number }> }>(
      await call('GET', '/xapi/v1/alarm-logs?pageSize=100'),
      200,
    ).data.filter((a) => a.source.id === rule);
    expect(after.map((a) => a.occurrenceCount)).toEqual([2]);
  });

  it('goes online from a The Things Stack uplink that went through the webhook and the ingest path', async () => {
    const tts = expectStatus<{ id: string; apiEndpoint: string }>(
      await call('POST', '/xapi/v1/connectors', { type: 'tts-uplink', title: 'TTS end to end' }),
      201,
    );
    const gateway = expectStatus<GatewayBody>(
      await call('POST', '/xapi/v1/gateways', { eui: 'B827EBFFFE61A1C2', title: 'Pump house' }),
      201,
    );
    await device('0004a30b001c0530', tts.id);
    const message = lorawanFixture('tts-docs-uplink') as {
      uplink_message: { rx_metadata: Array<{ gateway_ids: { eui?: string } }> };
    };
    message.uplink_message.rx_metadata[0]!.gateway_ids.eui = 'B827EBFFFE61A1C2';
    const posted = await t.app.inject({
      method: 'POST',
      url: new URL(tts.apiEndpoint).pathname,
      payload: message,
    });
    expect(posted.statusCode, posted.body).toBe(202);
    await processedPackets(t, tts.id, 1);
    await expect.poll(async () => (await getGateway(gateway.id)).status, { timeout: 10_000 }).toBe('online');
  });

  it('imports the gateway lists of The Things Stack and ChirpStack through the outgoing guard', async () => {
    const peer = await fakeNetworkServer({
      '/api/v3/gateways': {
        headers: { 'x-total-count': '2' },
        body: {
          gateways: [
            {
              ids: { gateway_id: 'roof-gw', eui: '58A0CBFFFE800001' },
              name: 'Roof',
              antennas: [
                { location: { latitude: 52.1, longitude: 13.2, altitude: 30, source: 'SOURCE_REGISTRY' } },
              ],
            },
            { ids: { gateway_id: 'no-eui' }, name: 'Virtual' },
          ],
        },
      },
      '/api/gateways': {
        body: {
          totalCount: 1,
          result: [
            {
              tenantId: '52f14cd4-c6f1-4fbd-8f87-4025e1d49242',
              gatewayId: '0016c001f153a14c',
              name: 'Cellar',
              location: { latitude: 50.5, longitude: 7.1, altitude: 0, source: 'UNKNOWN', accuracy: 0 },
              state: 'ONLINE',
            },
          ],
        },
      },
    });
    try {
      const box = t.ctx.secretBox;
      const tts = await connector('tts-uplink', {
        apiUrl: `${peer.url}/`,
        apiKey: { sealed: box.seal('NNSXS.TTS-KEY') },
      });
      const cs = await connector('chirpstack-uplink', {
        apiUrl: peer.url,
        apiToken: { sealed: box.seal('cs-token') },
        tenantId: '52f14cd4-c6f1-4fbd-8f87-4025e1d49242',
      });
      const fromTts = expectStatus<Record<string, unknown>>(
        await call('POST', '/xapi/v1/gateways/import', { connectorId: tts }),
        200,
      );
      expect(fromTts).toMatchObject({
        created: 1,
        updated: 0,
        skipped: [{ id: 'no-eui', reason: 'no gateway EUI' }],
      });
      expect(peer.seen[0]).toMatchObject({
        method: 'GET',
        headers: { authorization: 'Bearer NNSXS.TTS-KEY' },
      });
      const ttsQuery = new URL(peer.seen[0]!.url, 'http://x');
      expect(ttsQuery.pathname).toBe('/api/v3/gateways');
      expect(Object.fromEntries(ttsQuery.searchParams)).toEqual({
        field_mask: 'name,description,antennas',
        limit: '100',
        page: '1',
      });

      const fromChirpStack = expectStatus<Record<string, unknown>>(
        await call('POST', '/xapi/v1/gateways/import', { connectorId: cs }),
        200,
      );
      expect(fromChirpStack).toMatchObject({ created: 1, updated: 0, skipped: [] });
      expect(peer.seen[1]!.headers['grpc-metadata-authorization']).toBe('Bearer cs-token');
      const csQuery = new URL(peer.seen[1]!.url, 'http://x');
      expect(csQuery.pathname).toBe('/api/gateways');
      expect(Object.fromEntries(csQuery.searchParams)).toEqual({
        limit: '100',
        offset: '0',
        tenantId: '52f14cd4-c6f1-4fbd-8f87-4025e1d49242',
      });

      const all = expectStatus<{ data: GatewayBody[] }>(
        await call('GET', '/xapi/v1/gateways?pageSize=100'),
        200,
      ).data;
      expect(all.find((g) => g.eui === '58a0cbfffe800001')).toMatchObject({
        title: 'Roof',
        networkId: 'roof-gw',
        connectorId: tts,
        location: { latitude: 52.1, longitude: 13.2, altitude: 30 },
      });
      expect(all.find((g) => g.eui === '0016c001f153a14c')).toMatchObject({
        title: 'Cellar',
        connectorId: cs,
      });

      // Again: the same gateway is updated, not duplicated.
      expect(
        expectStatus(await call('POST', '/xapi/v1/gateways/import', { connectorId: tts }), 200),
      ).toMatchObject({ created: 0, updated: 1 });

      // Another tenant's connector is not found, and nothing is read from its network server.
      const child = expectStatus<{ id: string }>(
        await call('POST', '/xapi/v1/accounts', { title: 'Tenant', parentId: t.rootAccountId }),
        201,
      ).id;
      const tenant = await userWithPermissions(t, admin, 'Tenant importer', ['gateway.manage'], {
        accountId: child,
      });
      const foreign = await caller(t, bearer(tenant.token))('POST', '/xapi/v1/gateways/import', {
        connectorId: tts,
      });
      expect(foreign.statusCode).toBe(404);
      expect(peer.seen).toHaveLength(3);

      const webhook = await connector('webhook-in');
      const unsupported = await call('POST', '/xapi/v1/gateways/import', { connectorId: webhook });
      expect(unsupported.statusCode).toBe(422);
      expect(errorCode(unsupported)).toBe('GATEWAY_IMPORT_UNSUPPORTED');
    } finally {
      await peer.close();
    }
  });
});
