import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, screen, shell, Tray } from 'electron';
import { backupMenu } from './backup-menu.js';
import { acceptCertificate } from './certificate-trust.js';
import { DESKTOP_SETTINGS_FILE, writeChosenDataDir } from './data-dir.js';
import { openLogFile, type LogFile } from './log-file.js';
import { applicationMenu, trayMenu, trayToolTip, type MenuActions, type TrayStatus } from './menu.js';
import { hardenWebContents, isAllowedNavigation, SECURE_WEB_PREFERENCES } from './security.js';
import {
  attachOrStart,
  desktopSettings,
  watchHealth,
  type DesktopSettings,
  type ServerHandle,
} from './server-host.js';
import { readCertificateFile } from './server-https.js';
import { settingsWindow } from './settings-window.js';
import { currentServerConfig, type SettingsStore } from './settings-store.js';
import { MIN_SIZE, readWindowState, restoreBounds, writeWindowState } from './window-state.js';

/**
 * Desktop entry: one instance, a Stellwerk server (attached or started), one window on its web
 * console, a tray icon. No business logic lives here: the window shows the same console remote
 * browsers get, and everything goes to the server over HTTP.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
// Electron adds resourcesPath to process; Node's typings do not know it.
const resourcesPath = (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath ?? '';
const store: SettingsStore = {
  env: process.env,
  desktopSettingsFile: path.join(app.getPath('userData'), DESKTOP_SETTINGS_FILE),
  platform: process.platform,
  uid: process.getuid?.(),
};

/** Read again after the settings window saved: ports and the data directory may have changed. */
function readSettings(): { settings: DesktopSettings; dataDir: string } {
  const { dataDir, conf } = currentServerConfig(store);
  const current = desktopSettings({
    env: process.env,
    isPackaged: app.isPackaged,
    resourcesPath,
    // In development main.js is dist/electron/main.js inside the repository, however Electron was launched.
    appPath: app.isPackaged ? app.getAppPath() : path.resolve(here, '..', '..'),
    platform: process.platform,
    dataDir,
    conf,
  });
  return { settings: current, dataDir };
}
let { settings, dataDir } = readSettings();
const icons = app.isPackaged
  ? path.join(resourcesPath, 'icons')
  : path.join(here, '..', '..', 'installers', 'icons');
const windowStateFile = () => path.join(app.getPath('userData'), 'window-state.json');

let server: ServerHandle | undefined;
let window: BrowserWindow | undefined;
/** Held here so the icon is not garbage-collected away while the app runs. */
let tray: Tray | undefined;
let stopWatching: (() => void) | undefined;
let log: LogFile | undefined;
let quitting = false;

/** To the log file the tray's "Show Logs" opens, and to stdout for `npm run desktop`. */
const note = (line: string): void => {
  console.log(line);
  log?.write(line);
};

const openExternal = (url: string): void => {
  shell.openExternal(url).catch((error: unknown) => note(`[desktop] cannot open ${url}: ${String(error)}`));
};

const showLogs = (): void => {
  if (!log) return;
  void shell.openPath(log.file).then((failure) => {
    if (failure) note(`[desktop] cannot open the log ${log?.file}: ${failure}`);
  });
};

const settingsPage = settingsWindow({
  here,
  store,
  icon: path.join(icons, 'icon.png'),
  restart: async () => {
    await stopServer();
    await startServer();
    return `Saved. Stellwerk runs at ${settings.url}.`;
  },
});

const backups = backupMenu({
  window: () => window,
  server: () =>
    server?.mode === 'started' && settings.spawn ? { spec: settings.spawn, dataDir } : undefined,
  dataDirFixed: Boolean(process.env.STELLWERK_DATA_DIR?.trim()),
  stopServer: () => stopServer(),
  startServer: () => startServer(),
  useDataDir: (dir) => writeChosenDataDir(store.desktopSettingsFile, dir),
  note,
});

const actions: MenuActions = {
  showWindow: () => showWindow(),
  openSettings: () => settingsPage.open(),
  backUp: backups.backUpNow,
  restore: backups.restore,
  openApiDocs: () => openExternal(`${settings.url}/xapi/v1/docs`),
  openInBrowser: () => openExternal(settings.url),
  showLogs,
  reload: () => window?.webContents.reload(),
  toggleDevTools: () => window?.webContents.toggleDevTools(),
  quit: () => app.quit(),
};

function showWindow(): void {
  if (!window || window.isDestroyed()) {
    window = createWindow();
    return;
  }
  if (window.isMinimized()) window.restore();
  window.show();
  window.focus();
}

function createWindow(): BrowserWindow {
  const displays = [screen.getPrimaryDisplay(), ...screen.getAllDisplays()].map((d) => d.workArea);
  const state = restoreBounds(readWindowState(windowStateFile()), displays);
  const win = new BrowserWindow({
    ...state.bounds,
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    show: false,
    title: 'Stellwerk',
    icon: path.join(icons, 'icon.png'),
    backgroundColor: '#1f3a5f',
    webPreferences: { ...SECURE_WEB_PREFERENCES, preload: path.join(here, 'preload.cjs') },
  });
  win.once('ready-to-show', () => {
    if (state.maximized) win.maximize();
    win.show();
  });
  win.on('close', () => saveWindowState(win));
  win
    .loadURL(`${settings.url}/`)
    .catch((error: unknown) => note(`[desktop] cannot load the console: ${String(error)}`));
  return win;
}

function saveWindowState(win: BrowserWindow | undefined): void {
  if (!win || win.isDestroyed()) return;
  writeWindowState(windowStateFile(), { bounds: win.getNormalBounds(), maximized: win.isMaximized() });
}

/** The tray shows whether the server answers, polled in the background (watchHealth). */
function showTray(handle: ServerHandle): void {
  if (!tray) {
    const image = nativeImage.createFromPath(path.join(icons, 'tray.png'));
    tray = new Tray(image.isEmpty() ? nativeImage.createEmpty() : image);
    tray.on('click', () => showWindow());
  }
  const icon = tray;
  const show = (status: TrayStatus) => {
    icon.setToolTip(trayToolTip(status));
    icon.setContextMenu(Menu.buildFromTemplate(trayMenu(status, actions)));
  };
  show({ url: handle.url, mode: handle.mode, health: 'running' });
  stopWatching?.();
  stopWatching = watchHealth(
    handle.url,
    (health) => {
      if (health === 'not-answering') note(`[desktop] Stellwerk at ${handle.url} does not answer`);
      show({ url: handle.url, mode: handle.mode, health });
    },
    undefined,
    handle.certFile,
  );
}

function showMenu(): void {
  const context = {
    platform: process.platform,
    appName: app.getName(),
    isPackaged: app.isPackaged,
    managesServer: server?.mode === 'started' || (!server && settings.spawn !== undefined),
  };
  Menu.setApplicationMenu(Menu.buildFromTemplate(applicationMenu(context, actions)));
}

/** Attaches to or starts the server on the current settings, then points tray, menu and window at it. */
async function startServer(): Promise<void> {
  ({ settings, dataDir } = readSettings());
  server = await attachOrStart({ settings, onOutput: (line) => note(`[server] ${line}`) });
  note(
    `[desktop] ${server.mode === 'started' ? `started the server (pid ${server.pid})` : 'attached'} at ${server.url}`,
  );
  showTray(server);
  showMenu();
  if (window && !window.isDestroyed() && !window.webContents.getURL().startsWith(`${server.url}/`))
    window
      .loadURL(`${server.url}/`)
      .catch((error: unknown) => note(`[desktop] cannot load the console: ${String(error)}`));
}

/** Stops a server this app started (settings change, restore); a server it attached to keeps running. */
async function stopServer(): Promise<void> {
  const handle = server;
  server = undefined;
  if (handle?.mode !== 'started') return;
  note('[desktop] stopping the server');
  await handle.stop();
}

async function start(): Promise<void> {
  // A second launch focuses the first instance's window instead of starting another server.
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  app.on('second-instance', () => showWindow());
  // Only the first instance owns the log: a second launch must not rotate it away.
  log = openLogFile(app.getPath('logs'), 'stellwerk-desktop.log');
  note(`[desktop] Stellwerk desktop ${app.getVersion()}, server ${settings.url}`);
  app.on('web-contents-created', (_event, contents) =>
    hardenWebContents(contents, () => settings.url, openExternal),
  );
  // The server's own certificate (self-signed, or not issued for 127.0.0.1) on its own origin only;
  // the file is read each time, as the server may have renewed it at a restart.
  app.on('certificate-error', (event, _contents, url, _error, certificate, callback) => {
    const trusted = acceptCertificate({
      url,
      appUrl: settings.url,
      presentedPem: certificate.data,
      trustedPem: readCertificateFile(settings.certFile),
    });
    if (trusted) event.preventDefault();
    callback(trusted);
  });
  // The tray keeps the app (and a server it started) alive with no window open.
  app.on('window-all-closed', () => {});
  app.on('activate', () => showWindow());
  app.on('before-quit', (event) => {
    // Saved here too: app.exit below closes the window without its 'close' event.
    saveWindowState(window);
    stopWatching?.();
    if (quitting || !server || server.mode === 'attached') return;
    // Stop the server we started before exiting, so its PostgreSQL shuts down cleanly.
    event.preventDefault();
    quitting = true;
    const handle = server;
    handle
      .stop()
      .catch((error: unknown) => note(`[desktop] stopping the server failed: ${String(error)}`))
      .finally(() => {
        note('[desktop] server stopped, quitting');
        log?.close();
        tray?.destroy();
        app.exit(0);
      });
  });

  await app.whenReady();
  ipcMain.handle('stellwerk:server-info', (event) => {
    // Answer only the console itself, never a foreign page that got into a frame.
    if (!event.senderFrame || !isAllowedNavigation(event.senderFrame.url, settings.url)) return null;
    return server ? { url: server.url, mode: server.mode } : null;
  });
  showMenu();

  try {
    await startServer();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    note(`[desktop] Stellwerk could not start: ${message}`);
    dialog.showErrorBox('Stellwerk could not start', `${message}\n\nLog: ${log.file}`);
    app.exit(1);
    return;
  }
  showWindow();
}

start().catch((error: unknown) => {
  note(
    `[desktop] Stellwerk desktop failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  app.exit(1);
});
