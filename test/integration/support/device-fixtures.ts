import { Account } from '../../../server/src/accounts/account.entity.js';
import { Connector } from '../../../server/src/connectors/connector.entity.js';
import { DeviceDriver } from '../../../server/src/drivers/device-driver.entity.js';
import type { TestApp } from './test-app.js';

/** Connector and driver rows for device tests, made through the ORM (their APIs belong to other domains). */

export async function makeConnector(t: TestApp, accountId: string, type = 'webhook-in'): Promise<string> {
  return t.withContext(async () => {
    const em = t.ctx.em();
    const connector = new Connector();
    connector.account = em.getReference(Account, accountId);
    connector.title = `connector ${type}`;
    connector.type = type;
    await em.persistAndFlush(connector);
    return connector.id;
  });
}

export async function makeDriver(t: TestApp, accountId: string, shared = false): Promise<string> {
  return t.withContext(async () => {
    const em = t.ctx.em();
    const driver = new DeviceDriver();
    driver.account = em.getReference(Account, accountId);
    driver.title = 'driver';
    driver.shared = shared;
    await em.persistAndFlush(driver);
    return driver.id;
  });
}
