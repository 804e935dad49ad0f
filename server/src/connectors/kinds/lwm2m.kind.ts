import { isIP } from 'node:net';
import { Type } from 'typebox';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { linkKindRuntime } from '../links/link.types.js';
import { normalisePath } from '../lwm2m/lwm2m-content.js';
import { lwm2mDownlinkSender } from '../lwm2m/lwm2m-downlink.js';
import { DEFAULT_BIND_ADDRESS, DEFAULT_MAX_CLIENTS, DEFAULT_PORT, lwm2mLink } from '../lwm2m/lwm2m.link.js';
import { ConfigCheck } from './config-fields.js';
import { integer, settingsObject, text } from './settings-fields.js';

const MAX_OBSERVE = 50;

function check(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  if (typeof config.bindAddress === 'string' && config.bindAddress !== '' && isIP(config.bindAddress) === 0)
    check.problem(
      'bindAddress',
      'format',
      { format: 'ip' },
      'must be an IPv4 or IPv6 address of this server (0.0.0.0 or :: for every interface)',
    );
  if (Array.isArray(config.observe)) {
    config.observe.forEach((path, i) => {
      if (typeof path !== 'string' || normalisePath(path) === undefined)
        check.problem(
          `observe/${i}`,
          'format',
          { format: 'lwm2m-path' },
          'must be an LwM2M path: object/instance/resource, e.g. 3303/0/5700',
        );
    });
  }
  return check.problems;
}

/**
 * An LwM2M 1.1 server over CoAP/UDP without DTLS (docs/connectors/lwm2m.md, docs/adr/0126): clients
 * register on /rd with their endpoint name, which is the device id; configured paths are observed
 * after each registration; read, write and execute go out as downlinks.
 */
export const lwm2mKind: ConnectorKindDescriptor = {
  type: 'lwm2m',
  direction: 'incoming',
  summary:
    'LwM2M 1.1 server on CoAP/UDP (no DTLS): registration, observe, Send, SenML/TLV/text values, read/write/execute downlinks.',
  capabilities: ['receives', 'downlink', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject({
    port: integer(1024, 65535, `UDP port the server listens on (default ${DEFAULT_PORT})`),
    bindAddress: text(
      45,
      `Address to listen on (default ${DEFAULT_BIND_ADDRESS}; 0.0.0.0 or :: for every interface)`,
    ),
    observe: Type.Array(text(30), {
      maxItems: MAX_OBSERVE,
      description: 'Object, instance or resource paths observed after each registration, e.g. 3303/0/5700',
    }),
    maxClients: integer(1, 100_000, `Clients registered at once at most (default ${DEFAULT_MAX_CLIENTS})`),
  }),
  check,
  devices: PLAIN_DEVICES,
  runtime: ({ links, lwm2m }) => ({
    ...linkKindRuntime(links, 'lwm2m', lwm2mLink(lwm2m)),
    downlink: lwm2mDownlinkSender(links),
  }),
};
