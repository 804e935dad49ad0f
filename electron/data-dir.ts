import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Which data directory the desktop's server uses. stellwerk.conf lives inside the data
 * directory, so the directory itself cannot be a line of that file: the desktop remembers the
 * folder chosen in its settings window in its own `desktop-settings.json` (Electron's user-data
 * folder). `STELLWERK_DATA_DIR` in the environment wins over that choice, as everywhere.
 */

/**
 * As `defaultDataDir` in server/src/config-values.ts (the desktop build does not compile server
 * sources): the server's default for a fresh install, so the desktop and `stellwerk` agree.
 */
export function serverDefaultDataDir(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  uid: number | undefined,
  home = os.homedir(),
): string {
  if (platform === 'win32') return path.win32.join(env.PROGRAMDATA ?? 'C:\\ProgramData', 'Stellwerk');
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', 'Stellwerk');
  if (uid === 0) return '/var/lib/stellwerk';
  return path.posix.join(env.XDG_DATA_HOME ?? path.posix.join(home, '.local', 'share'), 'stellwerk');
}

export const DESKTOP_SETTINGS_FILE = 'desktop-settings.json';

/** The folder last chosen in the settings window, or undefined (unreadable files count as none). */
export function readChosenDataDir(file: string): string | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as { dataDir?: unknown };
    return typeof parsed.dataDir === 'string' && path.isAbsolute(parsed.dataDir) ? parsed.dataDir : undefined;
  } catch {
    return undefined;
  }
}

export function writeChosenDataDir(file: string, dataDir: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ dataDir }, null, 2)}\n`);
}

export interface DataDirSource {
  env: NodeJS.ProcessEnv;
  chosen: string | undefined;
  platform: NodeJS.Platform;
  uid: number | undefined;
}

/** Environment, else the folder chosen in the window, else the server's default. */
export function effectiveDataDir(source: DataDirSource): string {
  const fromEnv = source.env.STELLWERK_DATA_DIR?.trim();
  if (fromEnv) return path.resolve(fromEnv);
  return source.chosen ?? serverDefaultDataDir(source.env, source.platform, source.uid);
}
