import fs from 'node:fs';
import path from 'node:path';
import { confPath, parseConf, readConfText, updateConfFile } from './conf-file.js';
import { effectiveDataDir, readChosenDataDir, writeChosenDataDir } from './data-dir.js';
import {
  checkSettings,
  confChanges,
  settingsView,
  type SettingsErrors,
  type SettingsValues,
  type SettingsView,
} from './settings-form.js';

/**
 * Loading and saving the settings window's values: the data directory from the desktop's own
 * choice (data-dir.ts), everything else from that directory's stellwerk.conf. Pure Node.
 */

export interface SettingsStore {
  env: NodeJS.ProcessEnv;
  /** `desktop-settings.json` in Electron's user-data folder. */
  desktopSettingsFile: string;
  platform: NodeJS.Platform;
  uid: number | undefined;
}

/** Where the server the app starts keeps its data, and that directory's settings. */
export function currentServerConfig(store: SettingsStore): { dataDir: string; conf: Record<string, string> } {
  const dataDir = effectiveDataDir({
    env: store.env,
    chosen: readChosenDataDir(store.desktopSettingsFile),
    platform: store.platform,
    uid: store.uid,
  });
  return { dataDir, conf: parseConf(readConfText(confPath(dataDir))) };
}

export function loadSettings(store: SettingsStore): SettingsView {
  const { dataDir, conf } = currentServerConfig(store);
  return settingsView(store.env, conf, dataDir, confPath(dataDir));
}

export type SaveResult = { ok: true; changed: boolean } | { ok: false; errors: SettingsErrors };

const isReadableFile = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
};

/**
 * Checks the page's input and writes it. A new data directory gets the old directory's
 * stellwerk.conf as its starting point (so settings not in the window move along) unless it has
 * its own; the data itself does not move: a new directory starts empty, or is filled by Restore.
 * `changed` says whether the server needs a restart.
 */
export function saveSettings(store: SettingsStore, input: unknown): SaveResult {
  const before = loadSettings(store);
  const check = checkSettings(input, { isReadableFile, fixed: before.fromEnvironment });
  if (!check.ok) return check;
  // The page shows fixed fields read-only; whatever it sends for them, the environment's value stands.
  const fixed = Object.fromEntries(before.fromEnvironment.map((field) => [field, before.values[field]]));
  const values: SettingsValues = { ...check.values, ...fixed };

  const target = confPath(values.dataDir);
  if (values.dataDir !== before.values.dataDir) {
    fs.mkdirSync(values.dataDir, { recursive: true });
    if (!fs.existsSync(target) && fs.existsSync(before.confFile)) fs.copyFileSync(before.confFile, target);
    writeChosenDataDir(store.desktopSettingsFile, path.resolve(values.dataDir));
  }
  updateConfFile(target, confChanges(values, before.fromEnvironment));
  const after = loadSettings(store);
  return { ok: true, changed: JSON.stringify(after.values) !== JSON.stringify(before.values) };
}
