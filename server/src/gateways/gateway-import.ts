import type { Connector } from '../connectors/connector.entity.js';
import { openSecret } from '../connectors/kinds/config-fields.js';
import type { DialOut } from '../outgoing/dial/dial-out.js';
import type { SecretBox } from '../platform/crypto/secret-box.js';
import { errors } from '../platform/errors.js';

/**
 * Reading a network server's gateway list, for the import (gateway.routes.ts). Every request goes
 * through the one door to tenant-set targets (outgoing/dial), so the SSRF protection applies.
 *
 * - The Things Stack: `GET {apiUrl}/api/v3/gateways?field_mask=name,description,antennas&limit=&page=`
 *   with `Authorization: Bearer {apiKey}` (GatewayRegistry.List: the gateways the key may see; the
 *   total in `X-Total-Count`). A gateway without an EUI is skipped.
 * - ChirpStack v4 REST API: `GET {apiUrl}/api/gateways?limit=&offset=[&tenantId=]` with
 *   `Grpc-Metadata-Authorization: Bearer {apiToken}` (GatewayService.List; `totalCount`, `result`).
 */

/** A gateway as a network server lists it. */
export interface RemoteGateway {
  /** Lower-case hex. */
  eui: string;
  /** The network server's own id when it differs from the EUI (TTS `gateway_id`). */
  networkId: string | null;
  title: string;
  description: string;
  location: { latitude: number; longitude: number; altitude: number | null } | null;
}

export interface RemoteGatewayList {
  gateways: RemoteGateway[];
  /** Entries that could not become gateways, and why. */
  skipped: Array<{ id: string; reason: string }>;
}

const PAGE = 100;
/** At most this many pages (PAGE gateways each) per import. */
const MAX_PAGES = 100;
const EUI = /^[0-9a-f]{16}$/;

const TTS_KINDS = new Set(['tts-uplink']);
const CHIRPSTACK_KINDS = new Set(['chirpstack-uplink', 'chirpstack-mqtt']);

export const canImportGateways = (type: string) => TTS_KINDS.has(type) || CHIRPSTACK_KINDS.has(type);

/** A setting: sealed secrets opened, plain values as they are (kinds that store them plainly). */
function setting(connector: Connector, key: string, secretBox: SecretBox): string | undefined {
  const value = connector.config[key];
  if (typeof value === 'string') return value.trim() || undefined;
  return openSecret(connector.config, key, { secretBox });
}

const missing = (connector: Connector, key: string) =>
  errors.unprocessable(
    'CONNECTOR_SETTING_MISSING',
    `Connector ${connector.id} has no ${key}; the gateway import needs the network server's API`,
    [{ path: `/config/${key}` }],
  );

function location(raw: unknown): RemoteGateway['location'] {
  const l = raw as { latitude?: unknown; longitude?: unknown; altitude?: unknown } | undefined;
  if (typeof l?.latitude !== 'number' || typeof l.longitude !== 'number') return null;
  // Both zero is how an unset location arrives from a protobuf API.
  if (l.latitude === 0 && l.longitude === 0) return null;
  return {
    latitude: l.latitude,
    longitude: l.longitude,
    altitude: typeof l.altitude === 'number' ? l.altitude : null,
  };
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** One TTS gateway (v3 `Gateway` JSON) as a remote gateway, or why not. */
export function ttsGateway(raw: unknown): RemoteGateway | { skip: string; id: string } {
  const g = raw as {
    ids?: { gateway_id?: unknown; eui?: unknown };
    name?: unknown;
    description?: unknown;
    antennas?: unknown;
  };
  const id = str(g.ids?.gateway_id);
  const eui = str(g.ids?.eui).toLowerCase();
  if (!EUI.test(eui)) return { skip: 'no gateway EUI', id };
  const antennas = Array.isArray(g.antennas) ? (g.antennas as Array<{ location?: unknown }>) : [];
  return {
    eui,
    networkId: id || null,
    title: str(g.name) || id || eui,
    description: str(g.description),
    location: location(antennas[0]?.location),
  };
}

/** One ChirpStack v4 `GatewayListItem` (REST JSON, camelCase or proto names) as a remote gateway. */
export function chirpstackGateway(raw: unknown): RemoteGateway | { skip: string; id: string } {
  const g = raw as {
    gatewayId?: unknown;
    gateway_id?: unknown;
    name?: unknown;
    description?: unknown;
    location?: unknown;
  };
  const id = str(g.gatewayId ?? g.gateway_id).toLowerCase();
  if (!EUI.test(id)) return { skip: 'gateway id is not an EUI', id };
  return {
    eui: id,
    networkId: null,
    title: str(g.name) || id,
    description: str(g.description),
    location: location(g.location),
  };
}

export class GatewayLists {
  constructor(
    private readonly dial: DialOut,
    private readonly secretBox: SecretBox,
  ) {}

  /** Every gateway the connector's network server lists (paged, bounded). */
  async list(connector: Connector): Promise<RemoteGatewayList> {
    const apiUrl = setting(connector, 'apiUrl', this.secretBox)?.replace(/\/+$/, '');
    if (!apiUrl) throw missing(connector, 'apiUrl');
    if (!/^https?:\/\/[^/]/.test(apiUrl) || !URL.canParse(apiUrl)) {
      throw errors.unprocessable('CONNECTOR_SETTING_INVALID', 'apiUrl must be an http:// or https:// URL', [
        { path: '/config/apiUrl' },
      ]);
    }
    if (TTS_KINDS.has(connector.type)) {
      const apiKey = setting(connector, 'apiKey', this.secretBox);
      if (!apiKey) throw missing(connector, 'apiKey');
      return this.pages(connector, (page) => ({
        url: withQuery(`${apiUrl}/api/v3/gateways`, {
          field_mask: 'name,description,antennas',
          limit: String(PAGE),
          page: String(page + 1),
        }),
        headers: { authorization: `Bearer ${apiKey}` },
        items: (body) => (body as { gateways?: unknown[] }).gateways ?? [],
        total: (body, response) => Number(response.headers.get('x-total-count') ?? NaN),
        parse: ttsGateway,
      }));
    }
    if (CHIRPSTACK_KINDS.has(connector.type)) {
      const apiToken = setting(connector, 'apiToken', this.secretBox);
      if (!apiToken) throw missing(connector, 'apiToken');
      const tenantId = setting(connector, 'tenantId', this.secretBox);
      return this.pages(connector, (page) => ({
        url: withQuery(`${apiUrl}/api/gateways`, {
          limit: String(PAGE),
          offset: String(page * PAGE),
          ...(tenantId ? { tenantId } : {}),
        }),
        headers: { 'grpc-metadata-authorization': `Bearer ${apiToken}` },
        items: (body) => (body as { result?: unknown[] }).result ?? [],
        total: (body) =>
          Number(
            (body as { totalCount?: unknown; total_count?: unknown }).totalCount ??
              (body as { total_count?: unknown }).total_count,
          ),
        parse: chirpstackGateway,
      }));
    }
    throw errors.unprocessable(
      'GATEWAY_IMPORT_UNSUPPORTED',
      `Connector ${connector.id} is a ${connector.type} connector; gateways are imported from The Things Stack or ChirpStack connectors`,
      [{ path: '/connectorId', type: connector.type }],
    );
  }

  private async pages(
    connector: Connector,
    request: (page: number) => {
      url: string;
      headers: Record<string, string>;
      items: (body: unknown) => unknown[];
      total: (body: unknown, response: Response) => number;
      parse: (raw: unknown) => RemoteGateway | { skip: string; id: string };
    },
  ): Promise<RemoteGatewayList> {
    const out: RemoteGatewayList = { gateways: [], skipped: [] };
    let seen = 0;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const r = request(page);
      const body = await this.get(connector, r.url, r.headers);
      const items = r.items(body.json);
      for (const raw of items) {
        const parsed = r.parse(raw);
        if ('skip' in parsed) out.skipped.push({ id: parsed.id, reason: parsed.skip });
        else out.gateways.push(parsed);
      }
      seen += items.length;
      const total = r.total(body.json, body.response);
      if (items.length < PAGE || (Number.isFinite(total) && seen >= total)) break;
    }
    return out;
  }

  private async get(connector: Connector, url: string, headers: Record<string, string>) {
    let response: Response;
    try {
      response = await this.dial.fetch(url, {
        headers: { accept: 'application/json', 'user-agent': 'Stellwerk-Gateways/1', ...headers },
        redirect: 'manual',
        signal: AbortSignal.timeout(15_000),
      });
    } catch {
      throw errors.unprocessable(
        'NETWORK_SERVER_UNREACHABLE',
        `The network server of connector ${connector.id} could not be reached`,
        [{ path: '/config/apiUrl' }],
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw errors.unprocessable(
        'NETWORK_SERVER_REFUSED',
        `The network server answered ${response.status} to the gateway list`,
        [{ status: response.status }],
      );
    }
    let json: unknown;
    try {
      json = await response.json();
    } catch {
      throw errors.unprocessable('NETWORK_SERVER_REFUSED', 'The network server’s gateway list is not JSON');
    }
    return { json, response };
  }
}

function withQuery(base: string, query: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}
