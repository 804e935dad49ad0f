import { Type } from 'typebox';
import { PLAIN_DEVICES, type ConnectorKindDescriptor } from '../connector-kind.js';
import { linkKindRuntime } from '../links/link.types.js';
import { OpcuaDriver, SECURITY_MODES, SECURITY_POLICIES } from '../opcua/opcua-link.js';
import { opcuaDownlinkSender } from '../opcua/opcua-downlink.js';
import { ConfigCheck } from './config-fields.js';
import { integer, oneOf, secret, settingsObject, text } from './settings-fields.js';

const MAX_NODES = 500;
const NODE_ID = /^(?:ns=\d{1,5};)?[isgb]=.+$/s;

/** Rules the schema cannot say: the URL scheme, node id grammar, security that fits together. */
function check(config: Record<string, unknown>) {
  const check = new ConfigCheck(config);
  if (
    typeof config.endpointUrl === 'string' &&
    !/^opc\.tcp:\/\/(\[[0-9a-f:.]+\]|[^\s/:[\]]+)(:\d{1,5})?(\/\S*)?$/i.test(config.endpointUrl)
  )
    check.problem('endpointUrl', 'format', { format: 'opcua-url' }, 'must be an opc.tcp://host:port URL');
  const mode = config.securityMode ?? 'None';
  const policy = config.securityPolicy ?? (mode === 'None' ? 'None' : 'Basic256Sha256');
  if ((mode === 'None') !== (policy === 'None'))
    check.custom('securityPolicy', 'securityMode None goes with securityPolicy None, and only with it');
  check.pem('userCertificate', /-----BEGIN CERTIFICATE-----/);
  check.pem('userPrivateKey', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  check.together('userCertificate', 'userPrivateKey');
  if (config.username !== undefined && config.userCertificate !== undefined)
    check.custom('userCertificate', 'log in with a user name or with a certificate, not both');
  if (
    typeof config.serverCertificateSha256 === 'string' &&
    config.serverCertificateSha256.replace(/[\s:]/g, '').length !== 64
  )
    check.problem(
      'serverCertificateSha256',
      'format',
      { format: 'sha256-fingerprint' },
      'must be the 64 hex digits of a SHA-256 fingerprint',
    );
  const nodes = Array.isArray(config.nodes) ? (config.nodes as Array<Record<string, unknown>>) : [];
  const seen = new Set<string>();
  nodes.forEach((node, i) => {
    if (typeof node?.nodeId !== 'string' || !NODE_ID.test(node.nodeId))
      check.problem(
        `nodes/${i}/nodeId`,
        'format',
        { format: 'opcua-node-id' },
        'must be an OPC UA node id such as ns=2;s=Boiler.Temperature or i=2258',
      );
    else if (seen.has(node.nodeId))
      check.problem(`nodes/${i}/nodeId`, 'unique', { value: node.nodeId }, 'is mapped twice');
    else seen.add(node.nodeId);
  });
  return check.problems;
}

/**
 * An OPC UA client (docs/connectors/opcua.md, docs/adr/0128-opcua-client.md): subscribes to the
 * mapped nodes of a server, writes nodes as downlinks; the console browses through its session.
 */
export const opcuaKind: ConnectorKindDescriptor = {
  type: 'opcua',
  direction: 'incoming',
  summary:
    'OPC UA client: subscribes to mapped nodes of a server (None/Sign/SignAndEncrypt, user name or certificate), browses, writes as downlinks.',
  capabilities: ['subscribe', 'receives', 'downlink', 'monitoring'],
  monitoring: 'connection',
  settings: settingsObject(
    {
      endpointUrl: text(500, 'opc.tcp://host:port/path of the server endpoint'),
      securityMode: oneOf(SECURITY_MODES, 'Message security (default None)'),
      securityPolicy: oneOf(SECURITY_POLICIES, 'Security policy (default Basic256Sha256 when secured)'),
      username: text(200, 'User name; without it and without a certificate the session is anonymous'),
      password: secret(500),
      userCertificate: text(20_000, 'PEM X.509 certificate to log in with (with userPrivateKey)'),
      userPrivateKey: secret(20_000, 'PEM private key of userCertificate'),
      serverCertificateSha256: text(
        100,
        'SHA-256 fingerprint of the server certificate to trust; without it the first one seen is trusted',
      ),
      samplingIntervalMs: integer(0, 3_600_000, 'How often the server samples each node (default 1000)'),
      publishingIntervalMs: integer(50, 3_600_000, 'How often the server sends changes (default 1000)'),
      nodes: Type.Array(
        Type.Object({
          nodeId: text(500, 'e.g. ns=2;s=Boiler.Temperature'),
          deviceId: Type.String({ minLength: 1, maxLength: 200, description: 'device_id of the device' }),
          state: Type.String({ minLength: 1, maxLength: 200, description: 'State the value is stored as' }),
        }),
        { maxItems: MAX_NODES, description: 'Node ids mapped to device states' },
      ),
    },
    ['endpointUrl'],
  ),
  check,
  devices: PLAIN_DEVICES,
  runtime: ({ links, dataDir }) => ({
    ...linkKindRuntime(links, 'opcua', new OpcuaDriver(dataDir)),
    downlink: opcuaDownlinkSender(links),
  }),
};
