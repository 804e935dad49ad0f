import pg from 'pg';
import { inject } from 'vitest';
import { newId } from '../../../server/src/platform/crypto/ids.js';
import { TEMPLATE_DB, withDatabase } from '../global-setup.js';

/** A fresh, migrated database for one test file; dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const name = `stellwerk_test_${newId().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DB}`);
  await admin.end();
  return {
    url: withDatabase(adminUrl, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      // pg-pool's end() resolves before its clients' sockets have closed: a session still closing
      // would get FORCE's termination as an error nobody listens for any more (an uncaught exception
      // in the test file). Give them up to 2 s to go on their own; FORCE ends whatever is left.
      for (let waited = 0; waited < 2000; waited += 20) {
        const { rows } = await client.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
          [name],
        );
        if (rows[0]!.n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
