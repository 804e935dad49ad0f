import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../accounts/account.entity.js';
import { canReach } from '../accounts/account.service.js';
import type { Principal } from '../auth/principal.js';
import { Connector } from '../connectors/connector.entity.js';
import { DeviceDriver } from '../drivers/device-driver.entity.js';
import { PermissionScope } from '../permission-scopes/permission-scope.entity.js';
import { scopeFilter } from '../permission-scopes/scope-filter.js';
import { DeviceTemplate } from '../templates/device-template.entity.js';
import { takenKey, type ImportRow } from './device-import.rows.js';
import { connectorUsableIn, driverUsableIn } from './device-references.js';

const isUuidLike = (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v);

const EXISTING_SQL = 'SELECT connector_id, device_id, account_id FROM virtual_devices WHERE device_id IN (?)';

/**
 * What the rows of an import refer to, loaded batch by batch with one query per kind for the ids a
 * batch names that are not known yet: a 200,000-row file never becomes one query with 200,000
 * parameters (PostgreSQL takes at most 65,535). An id maps to its entity when the account may use
 * it, to null when it may not or does not exist.
 */
export class ImportReferences {
  readonly connectors = new Map<string, Connector | null>();
  readonly drivers = new Map<string, DeviceDriver | null>();
  readonly templates = new Map<string, DeviceTemplate | null>();
  readonly scopes = new Map<string, PermissionScope | null>();
  /** Device addresses already used (takenKey): in the database or by an earlier row of the file. */
  readonly taken = new Set<string>();

  constructor(
    private readonly em: EntityManager,
    private readonly account: Account,
    private readonly principal: Pick<Principal, 'accountId' | 'permissionScopeIds'>,
  ) {}

  async load(rows: ImportRow[]): Promise<void> {
    const asPrincipal = this.principal as Principal;
    const account = this.account;
    await this.fill(this.connectors, rows, 'connectorId', async (ids) => {
      const found = await this.em.find(Connector, { id: { $in: ids } }, { populate: ['account'] });
      return found.filter((c) => canReach(asPrincipal, c.account) && connectorUsableIn(c, account));
    });
    await this.fill(this.drivers, rows, 'deviceDriverId', async (ids) => {
      const found = await this.em.find(DeviceDriver, { id: { $in: ids } }, { populate: ['account'] });
      return found.filter((d) => driverUsableIn(d, account));
    });
    await this.fill(this.templates, rows, 'deviceTemplateId', (ids) =>
      this.em.find(DeviceTemplate, { id: { $in: ids }, account }, { populate: ['driver'] }),
    );
    const filter = scopeFilter(this.principal);
    await this.fill(this.scopes, rows, 'permissionScopeId', async (ids) => {
      const found = await this.em.find(PermissionScope, {
        id: { $in: ids },
        account: { path: { $contains: [account.id] } },
      });
      return found.filter((s) => filter.allows(s.id));
    });
    const deviceIds = [...new Set(rows.map((r) => r.record.device_id).filter((id): id is string => !!id))];
    if (deviceIds.length === 0) return;
    const existing = await this.em
      .getConnection()
      .execute<Array<{ connector_id: string | null; device_id: string; account_id: string }>>(EXISTING_SQL, [
        deviceIds,
      ]);
    for (const e of existing) {
      // Without a connector, a device_id is unique per account only.
      if (e.connector_id !== null || e.account_id === account.id)
        this.taken.add(takenKey(e.connector_id, e.device_id));
    }
  }

  private async fill<T extends { id: string }>(
    map: Map<string, T | null>,
    rows: ImportRow[],
    column: string,
    find: (ids: string[]) => Promise<T[]>,
  ): Promise<void> {
    const ids = new Set<string>();
    for (const row of rows) {
      const id = row.record[column];
      if (id && isUuidLike(id) && !map.has(id)) ids.add(id);
    }
    if (ids.size === 0) return;
    for (const id of ids) map.set(id, null);
    for (const entity of await find([...ids])) map.set(entity.id, entity);
  }
}
