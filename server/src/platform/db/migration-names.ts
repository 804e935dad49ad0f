import { readdirSync } from 'node:fs';
import { MIGRATIONS_DIR } from './orm.js';

/**
 * The migrations this build ships, oldest first, named as `mikro_orm_migrations` records them (file
 * name without extension). Read from the folder the migrator reads (`.ts` in the sources, `.js` in
 * the build; declaration files are not migrations).
 */
export function knownMigrations(dir = MIGRATIONS_DIR): string[] {
  return readdirSync(dir)
    .filter((file) => /^Migration\w+\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .map((file) => file.replace(/\.(ts|js)$/, ''))
    .sort();
}

/** Applied migrations this build does not know: the database was migrated by a newer Stellwerk. */
export function unknownMigrations(applied: string[], known: string[] = knownMigrations()): string[] {
  const set = new Set(known);
  return applied.filter((name) => !set.has(name));
}
