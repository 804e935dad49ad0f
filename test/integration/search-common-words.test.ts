import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceSearchText, deviceSearchSql } from '../../server/src/devices/virtual-device.filter.js';
import { containsSql, learnCommonWords } from '../../server/src/platform/http/common-words.js';
import type { Execute } from '../../server/src/platform/http/list-sql.js';
import { twinTitle } from '../../server/src/twins/digital-twin.filter.js';
import { makeConnector } from './support/device-fixtures.js';
import { caller, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

/**
 * Searches and title filters whose text holds a word nearly every row holds ("meter" in every
 * meter's title): the trigram index reads only the rarer words, and the rows are those of the whole
 * text, ignoring case, as the plain SQL of the search's meaning finds them.
 */
let t: TestApp;
let call: ReturnType<typeof caller>;
let accountId: string;

const sql = (text: string, params: unknown[] = []) =>
  t.orm.em.fork().getConnection().execute<Array<Record<string, unknown>>>(text, params);
const execute: Execute = async <T>(text: string, params: unknown[]) => (await sql(text, params)) as T;

const listed = async (path: string) => {
  const reply = expectStatus<{ data: Array<{ id: string }> }>(await call('GET', path), 200);
  return reply.data.map((d) => d.id).sort();
};
const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.id as string).sort();

/** The index condition of the plan of `where` on virtual_devices `d` / digital_twins `t`. */
async function indexCondition(from: string, where: { sql: string; params: unknown[] }) {
  // Through an index whatever the table's size: a sequential scan has no index condition to read.
  const plan = await t.orm.em.fork().transactional(async (em) => {
    await em.execute('SET LOCAL enable_seqscan = off');
    return em.execute<Array<Record<string, unknown>>>(
      `EXPLAIN SELECT 1 FROM ${from} WHERE ${where.sql}`,
      where.params,
    );
  });
  return plan
    .map((row) => String(row['QUERY PLAN']))
    .filter((line) => line.includes('Index Cond'))
    .join('\n');
}

beforeAll(async () => {
  t = await createTestApp();
  call = caller(t, { authorization: `Bearer ${await login(t)}` });
  accountId = expectStatus<{ id: string }>(
    await call('POST', '/xapi/v1/accounts', { title: 'Meters', parentId: t.rootAccountId }),
    201,
  ).id;
  const connectorId = await makeConnector(t, accountId);
  await sql(
    `INSERT INTO virtual_devices (id, account_id, connector_id, device_id, title, description, tags, groups,
        key_value_data, activation_method, skip_frame_counter_check, health_state, dev_eui, external_id,
        created_at, updated_at)
     SELECT gen_random_uuid(), ?, ?, 'meter-' || lpad(n::text, 5, '0'),
            CASE WHEN n % 500 = 0 THEN 'Gas counter ' || n ELSE 'Water Meter ' || n || ', zone ' || (n % 9) END,
            '', '{}', '{}', '{}', 'OTAA', false, 'Healthy', lpad(to_hex(n * 7919), 16, '0'), 'EXT-' || n,
            now(), now()
       FROM generate_series(1, 8000) AS n`,
    [accountId, connectorId],
  );
  await sql(
    `INSERT INTO digital_twins (id, account_id, path, title, custom_properties, tags, created_at, updated_at)
     SELECT gen_random_uuid(), ?, '{}', 'Building ' || n || ' wing ' || (n % 3), '{}', '{}', now(), now()
       FROM generate_series(1, 8000) AS n`,
    [accountId],
  );
  // The table's size (reltuples) is what decides whether it is worth sampling.
  await sql('ANALYZE virtual_devices');
  await sql('ANALYZE digital_twins');
}, 120_000);
afterAll(() => t?.close());

describe('searches with common words', () => {
  it('finds the rows of the whole text, whichever words are common', async () => {
    const texts = [
      'meter 123',
      'METER 123,',
      'water meter 77',
      'meter 12 zone 3',
      'counter 1500',
      'meter 1_3',
      'meter ---',
      'r 1234, z',
      'er 5100, zone 6',
    ];
    for (const text of texts) {
      const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const search = ids(
        await sql(
          `SELECT id FROM virtual_devices WHERE account_id = ?
              AND (title ILIKE ? OR device_id ILIKE ? OR dev_eui ILIKE ? OR external_id ILIKE ?
                   OR reference_id ILIKE ?)`,
          [accountId, pattern, pattern, pattern, pattern, pattern],
        ),
      );
      const q = encodeURIComponent(text);
      expect(
        await listed(`/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=500&searchItems=${q}`),
      ).toEqual(search);
      const titles = ids(
        await sql('SELECT id FROM virtual_devices WHERE account_id = ? AND title ILIKE ?', [
          accountId,
          pattern,
        ]),
      );
      expect(
        await listed(`/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=500&filter%5Btitle%5D=${q}`),
      ).toEqual(titles);
      const twins = ids(
        await sql('SELECT id FROM digital_twins WHERE account_id = ? AND title ILIKE ?', [
          accountId,
          pattern.replace(/meter/i, 'building'),
        ]),
      );
      const twinText = encodeURIComponent(text.replace(/meter/i, 'building'));
      expect(
        await listed(`/xapi/v1/digital-twins?accountId=${accountId}&pageSize=500&searchItems=${twinText}`),
      ).toEqual(twins);
    }
    // Not vacuous: the texts above find rows, and the common word alone finds more than a page.
    const found = await listed(
      `/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=500&searchItems=meter%20123`,
    );
    expect(found.length).toBeGreaterThan(5);
    expect(found.length).toBeLessThan(50);
  });

  it('finds a device by its reference id, through the search index', async () => {
    await sql(
      `UPDATE virtual_devices SET reference_id = 'Plant-' || substring(device_id from 7)
        WHERE account_id = ? AND title LIKE 'Gas counter %'`,
      [accountId],
    );
    const [wanted] = await sql('SELECT id FROM virtual_devices WHERE account_id = ? AND device_id = ?', [
      accountId,
      'meter-01500',
    ]);
    expect(
      await listed(`/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=500&searchItems=PLANT-01500`),
    ).toEqual([wanted!.id]);
    expect(
      await listed(`/xapi/v1/virtual-devices?accountId=${accountId}&pageSize=500&searchItems=plant-0`),
    ).toHaveLength(16);
    // The search's expression is the index's: the index answers it (its condition names the text).
    expect(await indexCondition('virtual_devices d', deviceSearchSql('d', 'plant-01500'))).toMatch(
      /reference_id.*'%plant-01500%'/,
    );
  });

  it('leaves the common words out of what the index reads, and only those', async () => {
    await learnCommonWords(execute, deviceSearchText('d'), ['Water meter 1234', 'counter 1500']);
    const narrowed = await indexCondition('virtual_devices d', deviceSearchSql('d', 'Water meter 1234'));
    expect(narrowed).toContain("'% 1234%'");
    expect(narrowed).not.toMatch(/meter|water/i);
    // Words in fewer than one row of a hundred are read by the index, all of them.
    const rare = await indexCondition('virtual_devices d', deviceSearchSql('d', 'counter 1500'));
    expect(rare).toContain('%counter 1500%');
    // A word without three letters or digits in a row gives the index nothing to read.
    await learnCommonWords(execute, deviceSearchText('d'), ['meter ---', 'meter 1_3']);
    expect(await indexCondition('virtual_devices d', deviceSearchSql('d', 'meter ---'))).toContain(
      '%meter ---%',
    );
    expect(await indexCondition('virtual_devices d', deviceSearchSql('d', 'meter 1_3'))).toContain(
      '%meter 1\\_3%',
    );
    // The twins' title: the same conditions (which the planner may answer by another index on a
    // table this small, so they are read from the SQL).
    await learnCommonWords(execute, twinTitle('t'), ['building 777']);
    expect(containsSql(twinTitle('t'), 'building 777')).toEqual({
      sql: "t.title ILIKE ? AND (t.title || '') ILIKE ?",
      params: ['% 777%', '%building 777%'],
    });
  });

  it('reads the whole text on a table too small to sample', async () => {
    await sql('DELETE FROM digital_twins WHERE title LIKE ?', ['Building %']);
    await sql(
      'INSERT INTO digital_twins (id, account_id, path, title, custom_properties, tags, created_at, updated_at) VALUES (gen_random_uuid(), ?, ?, ?, ?, ?, now(), now())',
      [accountId, '{}', 'Tower 9 east', '{}', '{}'],
    );
    await sql('ANALYZE digital_twins');
    // Sampled, "tower" (in every row) would be common and "north" (in none) not.
    await learnCommonWords(execute, twinTitle('t'), ['tower north']);
    expect(containsSql(twinTitle('t'), 'tower north')).toEqual({
      sql: 't.title ILIKE ?',
      params: ['%tower north%'],
    });
  });
});
