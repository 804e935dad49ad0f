import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account } from '../../server/src/accounts/account.entity.js';
import { Job } from '../../server/src/jobs/job.entity.js';
import { safeErrorMessage } from '../../server/src/platform/db/database-errors.js';
import { toErrorReply } from '../../server/src/platform/http/error-handler.js';
import { caller, expectStatus, login } from './support/identity.js';
import { createTestApp, type TestApp } from './support/test-app.js';

// Database errors from real PostgreSQL, through pg, knex and MikroORM: shown without their SQL.

let t: TestApp;
let pool: pg.Pool;
const LONG = 'secret-value-'.repeat(10);
const SQL_TEXT = /insert into|values|jobs|secret-value/i;

beforeAll(async () => {
  t = await createTestApp();
  pool = new pg.Pool({ connectionString: String(t.orm.config.get('clientUrl')), max: 1 });
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await t?.close();
});

/** What a caller catches; fails when the statement succeeded. */
async function thrown(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('the statement did not fail');
}

const rawInsert = (type: string) =>
  t.orm.em.getConnection().execute(
    `INSERT INTO jobs (id, account_id, type, status, input, errors, result, created_at, updated_at)
       VALUES (?, ?, ?, 'queued', '{}', '[]', '{}', now(), now())`,
    [randomUUID(), t.rootAccountId, type],
  );

describe('database error messages', () => {
  it('describe an over-long value by its limit, never by the statement or its values', async () => {
    const viaKnex = await thrown(() => rawInsert(LONG));
    // The premise: the driver's own message is the whole INSERT with the values in it.
    expect((viaKnex as Error).message).toMatch(/insert into/i);
    expect(safeErrorMessage(viaKnex)).toBe('value too long for a column (at most 60 characters)');

    const viaOrm = await thrown(() => {
      const em = t.orm.em.fork();
      const job = new Job();
      job.account = em.getReference(Account, t.rootAccountId);
      job.type = LONG;
      return em.insert(job);
    });
    expect(viaOrm).toBeInstanceOf(Error);
    expect(safeErrorMessage(viaOrm)).toBe('value too long for a column (at most 60 characters)');

    const viaPg = await thrown(() =>
      pool.query(
        `INSERT INTO jobs (id, account_id, type, status, input, errors, result, created_at, updated_at)
         VALUES ($1, $2, NULL, 'queued', '{}', '[]', '{}', now(), now())`,
        [randomUUID(), t.rootAccountId],
      ),
    );
    expect(viaPg).toBeInstanceOf(pg.DatabaseError);
    expect(safeErrorMessage(viaPg)).toBe('column type must not be empty');

    const badUuid = await thrown(() =>
      t.orm.em.getConnection().execute('SELECT 1 FROM jobs WHERE id = ?', [`${LONG}`]),
    );
    expect(safeErrorMessage(badUuid)).toBe('a value does not have the format of type uuid');
    for (const error of [viaKnex, viaOrm, viaPg, badUuid])
      expect(safeErrorMessage(error)).not.toMatch(SQL_TEXT);
  });

  it('give API callers the limit and never the statement', async () => {
    const { status, body } = toErrorReply(await thrown(() => rawInsert(LONG)));
    expect(status).toBe(400);
    expect(body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Invalid value: value too long for a column (at most 60 characters)',
      details: [],
    });
    const other = toErrorReply(
      await thrown(() =>
        t.orm.em.getConnection().execute(`SELECT no_such_column FROM jobs WHERE type = '${LONG}'`),
      ),
    );
    expect(other.status).toBe(500);
    expect(JSON.stringify(other.body)).not.toMatch(SQL_TEXT);
  });

  it('leave a failed job with a message free of SQL', async () => {
    t.services.jobs.runner.register({
      type: 'test-database-failure',
      retryable: false,
      run: async () => {
        await rawInsert(LONG);
      },
    });
    const job = await t.withContext(async () => {
      const account = await t.orm.em.findOneOrFail(Account, { id: t.rootAccountId });
      return t.services.jobs.enqueue({ account, type: 'test-database-failure' });
    });
    await t.services.jobs.runner.runOnce();
    const call = caller(t, { authorization: `Bearer ${await login(t)}` });
    const done = expectStatus<{ status: string; errors: Array<{ code: string; message: string }> }>(
      await call('GET', `/xapi/v1/jobs/${job.id}`),
      200,
    );
    expect(done.status).toBe('failed');
    expect(done.errors).toEqual([
      { code: 'JOB_FAILED', message: 'value too long for a column (at most 60 characters)' },
    ]);
  });
});
