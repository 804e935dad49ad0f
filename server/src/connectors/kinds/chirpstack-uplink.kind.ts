import { errors } from '../../platform/errors.js';
import type { ConnectorKindDescriptor } from '../connector-kind.js';
import { chirpstackNetworkServer } from '../../downlinks/delivery/chirpstack.js';
import { chirpstackEvent } from './chirpstack.js';
import { checkApiUrl, LORAWAN_DEVICES, lorawanFields } from './lorawan.js';
import { secret, settingsObject, text } from './settings-fields.js';

/** Settings of both ChirpStack kinds: its REST API, for downlinks and device deletion. */
export const chirpstackApiFields = () => ({
  apiUrl: text(500, 'ChirpStack REST API base, e.g. http://chirpstack-rest-api:8090'),
  apiToken: secret(2000, 'ChirpStack API token (downlinks, device deletion, gateway import)'),
  tenantId: text(100, 'ChirpStack tenant id whose gateways are imported (an admin token sees every tenant)'),
});

/**
 * ChirpStack v4 HTTP integration: ChirpStack POSTs every event of an application to this
 * connector's `apiEndpoint` with `?event=up|join|status|ack|txack|log|location` and a JSON body
 * (the integration's JSON encoding). Events are read by chirpstack.ts.
 */
export const chirpstackUplinkKind: ConnectorKindDescriptor = {
  type: 'chirpstack-uplink',
  direction: 'incoming',
  summary:
    'ChirpStack v4 HTTP integration: uplinks with metadata, joins, status, locations, downlink acks, logs.',
  capabilities: ['webhook', 'receives', 'downlink', 'remote-delete'],
  settings: settingsObject({ ...chirpstackApiFields(), ...lorawanFields() }),
  check: checkApiUrl,
  devices: LORAWAN_DEVICES,
  runtime: ({ outgoing }) => ({
    ...chirpstackNetworkServer(outgoing),
    webhookMessage(body, connector, request) {
      // The event is the query's (`?event=up`); a path such as `/up` is accepted as well.
      const event = request.query.event ?? request.path;
      if (!event)
        throw errors.unprocessable('EVENT_MISSING', 'The ChirpStack event type (?event=) is missing');
      return chirpstackEvent(event.toLowerCase(), body, connector.id);
    },
  }),
};
