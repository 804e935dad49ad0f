import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OPCUACertificateManager } from 'node-opcua';
import { LinkError } from '../links/link.types.js';

/**
 * The client's PKI and the trust in server certificates, under the server's data directory
 * (`<dataDir>/opcua/`), never the home directory node-opcua would pick:
 * - `pki/`: node-opcua's certificate store with Stellwerk's application instance certificate
 *   (self-signed, created on first use, one for every OPC UA connector of this server);
 * - `trust/<connectorId>.json`: the server certificate a connector trusted on first use.
 * Whether a server certificate is trusted is decided here (pinned fingerprint, else trust on first
 * use); node-opcua's own store accepts what this module let through.
 */
/** The application URI of Stellwerk's client certificate; servers that check it see this. */
export const APPLICATION_URI = 'urn:stellwerk:opcua-client';

export class OpcuaTrust {
  private manager: Promise<OPCUACertificateManager> | undefined;

  constructor(private readonly dir: string) {}

  /** The certificate manager every client of the kind shares; created once (key generation is slow). */
  certificateManager(): Promise<OPCUACertificateManager> {
    this.manager ??= (async () => {
      const manager = new OPCUACertificateManager({
        rootFolder: path.join(this.dir, 'pki'),
        automaticallyAcceptUnknownCertificate: true,
        disableFileWatchers: true,
      });
      await manager.initialize();
      // Created here once, not by each client: two connectors starting together would race for it.
      const certificateFile = this.certificateFile();
      if (
        !(await access(certificateFile).then(
          () => true,
          () => false,
        ))
      )
        await manager.createSelfSignedCertificate({
          applicationUri: APPLICATION_URI,
          dns: [os.hostname()],
          outputFile: certificateFile,
          subject: '/CN=Stellwerk/O=Stellwerk',
          startDate: new Date(),
          validity: 3650,
        });
      return manager;
    })();
    this.manager.catch(() => (this.manager = undefined));
    return this.manager;
  }

  /** Stellwerk's application instance certificate (PEM), in the store's `own/` folder. */
  certificateFile(): string {
    return path.join(this.dir, 'pki', 'own', 'certs', 'client_certificate.pem');
  }

  /**
   * Whether the connector may use `certificate` (DER) of the server at `endpointUrl`: it must have
   * the pinned SHA-256 fingerprint when one is set; without one, the first certificate seen for the
   * endpoint is remembered and any other refused. Returns the fingerprint and whether it was new.
   */
  async check(
    connectorId: string,
    endpointUrl: string,
    certificate: Buffer,
    pinned: string | undefined,
  ): Promise<{ fingerprint: string; firstUse: boolean }> {
    const fingerprint = sha256(certificate);
    if (pinned !== undefined) {
      if (normalise(pinned) !== fingerprint)
        throw new LinkError(
          `The server certificate (SHA-256 ${fingerprint}) is not the pinned one (${normalise(pinned)})`,
        );
      return { fingerprint, firstUse: false };
    }
    const file = path.join(this.dir, 'trust', `${connectorId.replace(/[^\w-]/g, '_')}.json`);
    const known = await readFile(file, 'utf8')
      .then((text) => JSON.parse(text) as { endpointUrl?: string; sha256?: string })
      .catch(() => undefined);
    if (known?.endpointUrl === endpointUrl && known.sha256) {
      if (known.sha256 !== fingerprint)
        throw new LinkError(
          `The server certificate changed (SHA-256 ${fingerprint}, trusted was ${known.sha256}); ` +
            'set serverCertificateSha256 to the new fingerprint if the change is expected',
        );
      return { fingerprint, firstUse: false };
    }
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(`${file}.tmp`, JSON.stringify({ endpointUrl, sha256: fingerprint }));
    await rename(`${file}.tmp`, file);
    return { fingerprint, firstUse: true };
  }
}

/** Upper-case hex pairs joined by colons, as certificate viewers show it. */
export function sha256(der: Buffer): string {
  return normalise(createHash('sha256').update(der).digest('hex'));
}

const normalise = (hex: string) =>
  hex
    .replace(/[^0-9a-f]/gi, '')
    .toUpperCase()
    .replace(/(..)(?=.)/g, '$1:');
