import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, screen, shell, Tray } from 'electron';
import { applicationMenu, trayMenu, type MenuActions } from './menu.js';
import { hardenWebContents, isAllowedNavigation, SECURE_WEB_PREFERENCES } from './security.js';
import { attachOrStart, desktopSettings, type ServerHandle } from './server-host.js';
import { MIN_SIZE, readWindowState, restoreBounds, writeWindowState } from './window-state.js';

/**
 * Desktop entry: one instance, a Stellwerk server (attached or started), one window on its web
 * console, a tray icon. No business logic lives here: the window shows the same console remote
 * browsers get, and everything goes to the server over HTTP.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
// Electron adds resourcesPath to process; Node's typings do not know it.
const resourcesPath = (process as NodeJS.Process & { resourcesPath?: string }).resourcesPath ?? '';
const settings = desktopSettings({
  env: process.env,
  isPackaged: app.isPackaged,
  resourcesPath,
  // In development main.js is dist/electron/main.js inside the repository, however Electron was launched.
  appPath: app.isPackaged ? app.getAppPath() : path.resolve(here, '..', '..'),
  platform: process.platform,
});
const icons = app.isPackaged
  ? path.join(resourcesPath, 'icons')
  : path.join(here, '..', '..', 'installers', 'icons');
const windowStateFile = () => path.join(app.getPath('userData'), 'window-state.json');

let server: ServerHandle | undefined;
let window: BrowserWindow | undefined;
let tray: Tray | undefined;
let quitting = false;

const openExternal = (url: string): void => {
  shell.openExternal(url).catch((error: unknown) => console.error('cannot open', url, error));
};

const actions: MenuActions = {
  showWindow: () => showWindow(),
  openApiDocs: () => openExternal(`${settings.url}/xapi/v1/docs`),
  openInBrowser: () => openExternal(settings.url),
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
  win.on('close', () => {
    writeWindowState(windowStateFile(), { bounds: win.getNormalBounds(), maximized: win.isMaximized() });
  });
  win.loadURL(`${settings.url}/`).catch((error: unknown) => console.error('cannot load the console', error));
  return win;
}

function createTray(handle: ServerHandle): void {
  const image = nativeImage.createFromPath(path.join(icons, 'tray.png'));
  tray = new Tray(image.isEmpty() ? nativeImage.createEmpty() : image);
  tray.setToolTip('Stellwerk');
  tray.setContextMenu(Menu.buildFromTemplate(trayMenu(handle, actions)));
  tray.on('click', () => showWindow());
}

async function start(): Promise<void> {
  // A second launch focuses the first instance's window instead of starting another server.
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  app.on('second-instance', () => showWindow());
  app.on('web-contents-created', (_event, contents) =>
    hardenWebContents(contents, settings.url, openExternal),
  );
  // The tray keeps the app (and a server it started) alive with no window open.
  app.on('window-all-closed', () => {});
  app.on('activate', () => showWindow());
  app.on('before-quit', (event) => {
    if (quitting || !server || server.mode === 'attached') return;
    // Stop the server we started before exiting, so its PostgreSQL shuts down cleanly.
    event.preventDefault();
    quitting = true;
    const handle = server;
    handle
      .stop()
      .catch((error: unknown) => console.error('stopping the server failed', error))
      .finally(() => app.exit(0));
  });

  await app.whenReady();
  ipcMain.handle('stellwerk:server-info', (event) => {
    // Answer only the console itself, never a foreign page that got into a frame.
    if (!event.senderFrame || !isAllowedNavigation(event.senderFrame.url, settings.url)) return null;
    return server ? { url: server.url, mode: server.mode } : null;
  });
  Menu.setApplicationMenu(
    Menu.buildFromTemplate(
      applicationMenu(
        { platform: process.platform, appName: app.getName(), isPackaged: app.isPackaged },
        actions,
      ),
    ),
  );

  try {
    server = await attachOrStart({ settings, onOutput: (line) => console.log(`[server] ${line}`) });
  } catch (error) {
    dialog.showErrorBox('Stellwerk could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
    return;
  }
  createTray(server);
  showWindow();
}

start().catch((error: unknown) => {
  console.error('Stellwerk desktop failed', error);
  app.exit(1);
});
