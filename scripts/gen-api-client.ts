import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import * as prettier from 'prettier';
import { buildServer } from '../server/src/app.js';
import { loadConfig } from '../server/src/config.js';
import { ENTITIES } from '../server/src/entities.js';
import { SecretBox } from '../server/src/platform/crypto/secret-box.js';
import { ormConfig } from '../server/src/platform/db/orm.js';
import { generateApiTypes, type OpenApiDocument } from './openapi-to-ts.js';

/**
 * `npm run gen:api`: writes renderer/src/api/generated.ts from the server's `/xapi/v1/openapi.json`.
 * The server is built in memory without a database (routes and schemas need none), so this runs
 * anywhere in about two seconds; gen-api-client.test.ts fails when the committed file is stale.
 */

export const GENERATED_FILE = path.resolve(
  import.meta.dirname,
  '..',
  'renderer',
  'src',
  'api',
  'generated.ts',
);

export async function loadOpenApiDocument(): Promise<OpenApiDocument> {
  const config = loadConfig({
    STELLWERK_DATA_DIR: path.join(os.tmpdir(), 'stellwerk-gen-api-unused'),
    // Never contacted: the ORM is initialised with connect: false.
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    STELLWERK_LOG_LEVEL: 'silent',
  });
  const orm = await MikroORM.init({
    ...ormConfig({ clientUrl: config.databaseUrl!, entities: ENTITIES }),
    connect: false,
  });
  const { app } = await buildServer({
    config,
    orm,
    secretBox: new SecretBox(randomBytes(32)),
    logger: false,
  });
  try {
    await app.ready();
    return (await app.inject({ url: '/xapi/v1/openapi.json' })).json<OpenApiDocument>();
  } finally {
    await app.close();
    await orm.close();
  }
}

/** The file's expected text: generated types, formatted like the rest of the repository. */
export async function renderApiClient(doc?: OpenApiDocument): Promise<string> {
  const source = generateApiTypes(doc ?? (await loadOpenApiDocument()));
  const options = (await prettier.resolveConfig(GENERATED_FILE)) ?? {};
  return prettier.format(source, { ...options, filepath: GENERATED_FILE });
}

if (path.resolve(process.argv[1] ?? '') === import.meta.filename) {
  const text = await renderApiClient();
  fs.mkdirSync(path.dirname(GENERATED_FILE), { recursive: true });
  fs.writeFileSync(GENERATED_FILE, text);
  console.log(`wrote ${path.relative(process.cwd(), GENERATED_FILE)} (${text.split('\n').length} lines)`);
}
