import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import {
  MessageSecurityMode,
  OPCUAClient,
  SecurityPolicy,
  UserTokenType,
  type ClientSession,
  type OPCUAClientOptions,
  type UserIdentityInfo,
} from 'node-opcua';
import type { Connector } from '../connector.entity.js';
import { LinkError, type LinkContext, type LinkDriver } from '../links/link.types.js';
import { OpcuaSession } from './opcua-session.js';
import { APPLICATION_URI, OpcuaTrust } from './opcua-trust.js';
import { guardedTransportFactory, type RefusalHolder } from './opcua-transport.js';
import type { NodeMapping } from './opcua-values.js';

export const SECURITY_MODES = ['None', 'Sign', 'SignAndEncrypt'] as const;
export const SECURITY_POLICIES = [
  'None',
  'Basic256Sha256',
  'Aes128_Sha256_RsaOaep',
  'Aes256_Sha256_RsaPss',
] as const;

/** Settings of an opcua connector as stored (secrets sealed as `{ sealed }`). */
export interface OpcuaConfig {
  endpointUrl: string;
  securityMode?: (typeof SECURITY_MODES)[number];
  securityPolicy?: (typeof SECURITY_POLICIES)[number];
  username?: string;
  password?: { sealed: string };
  userCertificate?: string;
  userPrivateKey?: { sealed: string };
  serverCertificateSha256?: string;
  samplingIntervalMs?: number;
  publishingIntervalMs?: number;
  nodes?: NodeMapping[];
}

const first = (message: string) => message.split('\n')[0]!.slice(0, 300);

/**
 * Opens an opcua connector's link: for a secured endpoint it first asks the server for its
 * endpoints (without security, as OPC UA discovery works) and checks the certificate of the one
 * chosen (opcua-trust.ts); then connects, opens the session with the user's identity and subscribes
 * to the mapped nodes. Every socket comes from the outgoing-target guard (opcua-transport.ts).
 */
export class OpcuaDriver implements LinkDriver<OpcuaSession> {
  private readonly trust: OpcuaTrust | undefined;
  /** Per connector: what was stored last per node (see OpcuaSession). */
  private readonly delivered = new Map<string, Map<string, string>>();

  constructor(dataDir: string | undefined) {
    this.trust = dataDir === undefined ? undefined : new OpcuaTrust(path.join(dataDir, 'opcua'));
  }

  target(connector: Connector): string {
    return String((connector.config as Partial<OpcuaConfig>).endpointUrl ?? '');
  }

  async open(ctx: LinkContext): Promise<OpcuaSession> {
    const config = ctx.connector.config as unknown as OpcuaConfig;
    const mode = config.securityMode ?? 'None';
    const policy = mode === 'None' ? 'None' : (config.securityPolicy ?? 'Basic256Sha256');
    const trust = this.trust;
    if (!trust) throw new Error('The OPC UA client needs the server data directory for its certificates');
    const manager = await trust.certificateManager();
    const refusals: RefusalHolder = {};
    const base: OPCUAClientOptions = {
      applicationName: 'Stellwerk',
      applicationUri: APPLICATION_URI,
      clientCertificateManager: manager,
      certificateFile: trust.certificateFile(),
      transportFactory: guardedTransportFactory(ctx.dial, refusals),
      // The link runtime reconnects with its backoff; node-opcua must not retry on its own.
      connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
      endpointMustExist: false,
      requestedSessionTimeout: 60_000,
      keepSessionAlive: true,
    };
    const serverCertificate =
      mode === 'None'
        ? undefined
        : await this.serverCertificate(ctx, trust, base, config, mode, policy).catch((error: unknown) => {
            throw refusals.refused ?? error;
          });
    const client = OPCUAClient.create({
      ...base,
      securityMode: MessageSecurityMode[mode],
      securityPolicy: SecurityPolicy[policy],
      ...(serverCertificate ? { serverCertificate } : {}),
    });
    const stop = () => void client.disconnect().catch(() => undefined);
    ctx.signal.addEventListener('abort', stop, { once: true });
    try {
      await client.connect(config.endpointUrl);
      let session: ClientSession;
      try {
        session = await client.createSession(this.identity(ctx, config));
      } catch (error) {
        throw new LinkError(`The server refused the session: ${first((error as Error).message)}`);
      }
      let delivered = this.delivered.get(ctx.connector.id);
      if (!delivered) this.delivered.set(ctx.connector.id, (delivered = new Map<string, string>()));
      const link = new OpcuaSession(client, session, ctx, delivered);
      try {
        await link.subscribe(
          config.nodes ?? [],
          config.publishingIntervalMs ?? 1000,
          config.samplingIntervalMs ?? 1000,
        );
      } catch (error) {
        await link.close();
        throw new LinkError(`The server refused the subscription: ${first((error as Error).message)}`);
      }
      return link;
    } catch (error) {
      await client.disconnect().catch(() => undefined);
      throw refusals.refused ?? error;
    } finally {
      ctx.signal.removeEventListener('abort', stop);
    }
  }

  /** The certificate of the endpoint with the configured security, once it is trusted. */
  private async serverCertificate(
    ctx: LinkContext,
    trust: OpcuaTrust,
    base: OPCUAClientOptions,
    config: OpcuaConfig,
    mode: (typeof SECURITY_MODES)[number],
    policy: (typeof SECURITY_POLICIES)[number],
  ): Promise<Buffer> {
    const probe = OPCUAClient.create({
      ...base,
      securityMode: MessageSecurityMode.None,
      securityPolicy: SecurityPolicy.None,
    });
    const endpoints = await (async () => {
      try {
        await probe.connect(config.endpointUrl);
        return await probe.getEndpoints();
      } finally {
        await probe.disconnect().catch(() => undefined);
      }
    })();
    const endpoint = endpoints.find(
      (e) => e.securityMode === MessageSecurityMode[mode] && e.securityPolicyUri === SecurityPolicy[policy],
    );
    if (!endpoint?.serverCertificate?.length) {
      const offered = endpoints.map(
        (e) => `${MessageSecurityMode[e.securityMode]}/${e.securityPolicyUri?.split('#')[1] ?? ''}`,
      );
      throw new LinkError(`The server offers no endpoint with ${mode}/${policy}`, {
        offered: [...new Set(offered)],
      });
    }
    const certificate = endpoint.serverCertificate;
    const { fingerprint, firstUse } = await trust.check(
      ctx.connector.id,
      config.endpointUrl,
      certificate,
      config.serverCertificateSha256,
    );
    if (firstUse) ctx.log('info', `Trusted the server certificate on first use (SHA-256 ${fingerprint})`);
    return certificate;
  }

  private identity(ctx: LinkContext, config: OpcuaConfig): UserIdentityInfo {
    if (config.username)
      return {
        type: UserTokenType.UserName,
        userName: config.username,
        password: ctx.secret('password') ?? '',
      };
    const key = ctx.secret('userPrivateKey');
    if (config.userCertificate && key)
      return {
        type: UserTokenType.Certificate,
        certificateData: new X509Certificate(config.userCertificate).raw,
        privateKey: key,
      };
    return { type: UserTokenType.Anonymous };
  }
}
