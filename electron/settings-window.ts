import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BrowserWindow, dialog, ipcMain, type IpcMainInvokeEvent } from 'electron';
import { isSettingsPage, SECURE_WEB_PREFERENCES } from './security.js';
import { loadSettings, saveSettings, type SettingsStore } from './settings-store.js';

/**
 * The settings window: a local page (settings-window/settings.html) under the same web
 * preferences as the console window, with its own three-call preload. Loading, checking and
 * writing are in settings-store.ts; this file only connects them to Electron.
 */

export interface SettingsWindowOptions {
  /** dist/electron, where the page and the preload are built. */
  here: string;
  store: SettingsStore;
  icon: string;
  /** Restarts the server on the saved settings; resolves to the line the page shows. */
  restart: () => Promise<string>;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function settingsWindow(options: SettingsWindowOptions): { open: () => void } {
  const page = path.join(options.here, 'settings-window', 'settings.html');
  const pageUrl = pathToFileURL(page).href;
  let win: BrowserWindow | undefined;

  // Only this window's own page may read or rewrite the settings.
  const fromPage = (event: IpcMainInvokeEvent) =>
    win !== undefined &&
    !win.isDestroyed() &&
    event.sender === win.webContents &&
    isSettingsPage(event.senderFrame?.url, pageUrl);

  ipcMain.handle('stellwerk-settings:load', (event) =>
    fromPage(event) ? loadSettings(options.store) : null,
  );
  ipcMain.handle('stellwerk-settings:save', async (event, values: unknown) => {
    if (!fromPage(event)) return null;
    try {
      const result = saveSettings(options.store, values);
      if (!result.ok) return result;
      if (!result.changed) return { ok: true, message: 'Nothing changed.' };
      return { ok: true, message: await options.restart() };
    } catch (error) {
      return { ok: false, message: `The server did not start with these settings: ${message(error)}` };
    }
  });
  ipcMain.handle('stellwerk-settings:choose-path', async (event, kind: unknown) => {
    if (!fromPage(event) || !win) return null;
    const chosen = await dialog.showOpenDialog(win, {
      properties: kind === 'folder' ? ['openDirectory', 'createDirectory'] : ['openFile'],
    });
    return chosen.canceled ? null : (chosen.filePaths[0] ?? null);
  });

  const open = () => {
    if (win && !win.isDestroyed()) {
      win.focus();
      return;
    }
    const created = new BrowserWindow({
      width: 560,
      height: 760,
      show: false,
      title: 'Stellwerk Settings',
      icon: options.icon,
      webPreferences: { ...SECURE_WEB_PREFERENCES, preload: path.join(options.here, 'settings-preload.cjs') },
    });
    win = created;
    created.setMenu(null);
    created.once('ready-to-show', () => created.show());
    created.loadFile(page).catch((error: unknown) => {
      dialog.showErrorBox('Stellwerk settings', `The settings page did not load: ${message(error)}`);
    });
  };
  return { open };
}
