import path from 'node:path';
import pino from 'pino';
import { EmbeddedDatabase } from '../server/src/platform/db/embedded-postgres.js';
import { startServer, type ServerProcess } from '../test/integration/support/server-process.js';
import { freePort } from './load.js';

/**
 * What the HTTP benchmarks start: an embedded PostgreSQL in `<dir>/pg` and the real server on free
 * ports, with an admin account and the API rate limit out of the way (the bench measures the server,
 * not the limiter). `cleanups` gets the server's stop first and the database's last.
 */
export async function startBenchSite(
  dir: string,
  admin: { email: string; password: string },
  cleanups: Array<() => Promise<void> | void>,
  env: Record<string, string> = {},
): Promise<{ url: string; server: ServerProcess; mqttPort: number }> {
  const embedded = new EmbeddedDatabase({
    dataDir: path.join(dir, 'pg'),
    port: 0,
    database: 'stellwerk',
    log: pino({ level: 'warn' }),
  });
  const url = await embedded.start();
  cleanups.push(() => embedded.stop());
  const mqttPort = await freePort();
  const server = await startServer(
    {
      DATABASE_URL: url,
      STELLWERK_DATA_DIR: dir,
      STELLWERK_MQTT_PORT: String(mqttPort),
      STELLWERK_MQTT_HOST: '127.0.0.1',
      STELLWERK_ADMIN_EMAIL: admin.email,
      STELLWERK_ADMIN_PASSWORD: admin.password,
      STELLWERK_RATE_LIMIT_MAX: '1000000',
      ...env,
    },
    120_000,
  );
  cleanups.unshift(async () => void (await server.stop('SIGTERM')));
  return { url, server, mqttPort };
}
