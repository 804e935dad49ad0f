import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Account } from '../accounts/account.entity.js';
import { canReach, type AccountService } from '../accounts/account.service.js';
import { actorOf, type AuditService } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import { AppError, errors } from '../platform/errors.js';
import { openContainedFile, type ContainedFile } from '../platform/http/contained-file.js';
import { pmtilesProblem, PMTILES_HEADER_BYTES } from './file-signatures.js';
import { RawUpload, receiveFile } from './upload-file.js';

/** The folder under STELLWERK_DATA_DIR that holds uploaded basemaps (not served as a folder). */
export const BASEMAPS_FOLDER = 'basemaps';
export const BASEMAP_URL_PREFIX = '/xapi/v1/basemaps/';
const FILE_NAME = /^([0-9a-f-]{36})\.pmtiles$/;

export interface BasemapInfo {
  url: string;
  bytes: number;
  uploadedAt: Date;
}

interface BasemapMeta {
  accountId: string;
  bytes: number;
  uploadedAt: string;
}

/**
 * Basemap archives uploaded per account. Each upload is a new file `<id>.pmtiles` with a sidecar
 * `<id>.json` naming its account, and the account's `uiSettings.mapStyleUrl` points at
 * `/xapi/v1/basemaps/<id>.pmtiles`: a new id per upload, so no cache serves the old tiles, and the
 * URL names no account, so a sub-account that inherits the setting learns no id above it. Readers:
 * the owning account, accounts above it, and its sub-accounts (they inherit the basemap). Callers of
 * upload and remove have checked account.manage.
 */
export class BasemapService {
  private readonly folder: string;

  constructor(
    dataDir: string,
    private readonly maxBytes: number,
    private readonly accounts: AccountService,
    private readonly audit: AuditService,
  ) {
    this.folder = path.join(dataDir, BASEMAPS_FOLDER);
  }

  /** The account's own uploaded basemap, if its basemap setting is one. */
  async info(principal: Principal, accountId: string): Promise<BasemapInfo | null> {
    const account = await this.accounts.reachable(principal, accountId);
    const id = this.ownUpload(account);
    const meta = id ? await this.meta(id) : null;
    if (!id || !meta || meta.accountId !== account.id) return null;
    return {
      url: `${BASEMAP_URL_PREFIX}${id}.pmtiles`,
      bytes: meta.bytes,
      uploadedAt: new Date(meta.uploadedAt),
    };
  }

  /**
   * Stores the streamed body as the account's basemap once it is a PMTiles v3 archive within the
   * size limit, sets it as the account's basemap and removes the one it replaces.
   */
  async upload(
    principal: Principal,
    accountId: string,
    body: unknown,
    declaredLength: number | undefined,
  ): Promise<BasemapInfo> {
    const account = await this.accounts.reachable(principal, accountId);
    if (!(body instanceof RawUpload)) {
      throw new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        415,
        'Send the archive itself as the body, with Content-Type application/vnd.pmtiles',
      );
    }
    const { tempPath, bytes } = await receiveFile(body.stream(), declaredLength, {
      folder: this.folder,
      limit: this.maxBytes,
      headBytes: PMTILES_HEADER_BYTES,
      checkHead: (head) => {
        const problem = pmtilesProblem(head);
        return problem
          ? new AppError('UNSUPPORTED_MEDIA_TYPE', 415, `A basemap must be a PMTiles v3 archive: ${problem}`)
          : null;
      },
    });
    const id = randomUUID();
    const uploadedAt = new Date();
    const meta: BasemapMeta = { accountId: account.id, bytes, uploadedAt: uploadedAt.toISOString() };
    try {
      await fs.writeFile(this.metaPath(id), JSON.stringify(meta), { mode: 0o600 });
      await fs.rename(tempPath, this.archivePath(id));
    } catch (error) {
      await fs.rm(tempPath, { force: true });
      throw error;
    }
    const previous = this.ownUpload(account);
    const url = `${BASEMAP_URL_PREFIX}${id}.pmtiles`;
    await this.accounts.update(principal, account.id, {
      uiSettings: { ...account.uiSettings, mapStyleUrl: url },
    });
    await this.audit.record({
      accountId: account.id,
      actor: actorOf(principal),
      action: 'account.basemap.upload',
      target: { type: 'account', id: account.id },
      details: { bytes, url },
    });
    if (previous) await this.removeFiles(previous, account.id);
    return { url, bytes, uploadedAt };
  }

  /** Removes the account's uploaded basemap and, when it was the basemap, the setting too. */
  async remove(principal: Principal, accountId: string): Promise<void> {
    const account = await this.accounts.reachable(principal, accountId);
    const id = this.ownUpload(account);
    if (!id || !(await this.removeFiles(id, account.id))) return;
    const { mapStyleUrl: _removed, ...rest } = account.uiSettings;
    await this.accounts.update(principal, account.id, { uiSettings: rest });
    await this.audit.record({
      accountId: account.id,
      actor: actorOf(principal),
      action: 'account.basemap.remove',
      target: { type: 'account', id: account.id },
    });
  }

  /** The archive for serving, when the caller's account is the owner, above it or below it. */
  async open(principal: Principal, fileName: string): Promise<ContainedFile> {
    const notFound = () => errors.notFound('Basemap', fileName);
    const id = FILE_NAME.exec(fileName)?.[1];
    const meta = id ? await this.meta(id) : null;
    if (!id || !meta) throw notFound();
    const owner = await this.accounts.findById(meta.accountId);
    const home = await this.accounts.findById(principal.accountId);
    const readable = owner && (canReach(principal, owner) || home?.path.includes(owner.id));
    if (!readable) throw notFound();
    const file = await openContainedFile(this.folder, `${id}.pmtiles`);
    if (!file) throw notFound();
    return file;
  }

  private ownUpload(account: Account): string | null {
    const url = account.uiSettings.mapStyleUrl;
    if (typeof url !== 'string' || !url.startsWith(BASEMAP_URL_PREFIX)) return null;
    return FILE_NAME.exec(url.slice(BASEMAP_URL_PREFIX.length))?.[1] ?? null;
  }

  private async meta(id: string): Promise<BasemapMeta | null> {
    try {
      return JSON.parse(await fs.readFile(this.metaPath(id), 'utf8')) as BasemapMeta;
    } catch {
      return null;
    }
  }

  /** Deletes an upload's files if they belong to the account; answers whether they did. */
  private async removeFiles(id: string, accountId: string): Promise<boolean> {
    const meta = await this.meta(id);
    if (meta?.accountId !== accountId) return false;
    await fs.rm(this.archivePath(id), { force: true });
    await fs.rm(this.metaPath(id), { force: true });
    return true;
  }

  private archivePath = (id: string) => path.join(this.folder, `${id}.pmtiles`);
  private metaPath = (id: string) => path.join(this.folder, `${id}.json`);
}
