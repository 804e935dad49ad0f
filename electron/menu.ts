import type { MenuItemConstructorOptions } from 'electron';

/**
 * The application and tray menus as plain templates; main.ts turns them into Electron menus.
 * Kept free of Electron at run time so the structure is unit-tested.
 */

/** A template item whose click takes no arguments, so tests can call it; Electron accepts it as is. */
export type MenuEntry = Omit<MenuItemConstructorOptions, 'click' | 'submenu'> & {
  click?: () => void;
  submenu?: MenuEntry[];
};

/** Function properties, not methods: they are handed to menu items detached from this object. */
export interface MenuActions {
  showWindow: () => void;
  openApiDocs: () => void;
  openInBrowser: () => void;
  /** Opens the desktop's log file (the output of a server it started). */
  showLogs: () => void;
  openSettings: () => void;
  backUp: () => void;
  restore: () => void;
  reload: () => void;
  toggleDevTools: () => void;
  quit: () => void;
}

export interface MenuContext {
  platform: NodeJS.Platform;
  appName: string;
  /** Development builds get the developer tools entry. */
  isPackaged: boolean;
  /**
   * The app runs the server itself (not attached to a service or another machine): only then
   * do its settings, backup and restore apply to that server.
   */
  managesServer: boolean;
}

export function applicationMenu(context: MenuContext, actions: MenuActions): MenuEntry[] {
  const mac = context.platform === 'darwin';
  const managed = context.managesServer;
  const menu: MenuEntry[] = [];
  if (mac) menu.push({ label: context.appName, role: 'appMenu' });
  menu.push(
    {
      label: 'File',
      submenu: [
        { label: 'Settings…', accelerator: 'CmdOrCtrl+,', enabled: managed, click: actions.openSettings },
        { type: 'separator' },
        { label: 'Back up now…', enabled: managed, click: actions.backUp },
        { label: 'Restore…', enabled: managed, click: actions.restore },
        { type: 'separator' },
        { label: 'Open in Browser', accelerator: 'CmdOrCtrl+Shift+O', click: actions.openInBrowser },
        { type: 'separator' },
        mac ? { role: 'hide' } : { label: 'Quit', accelerator: 'Ctrl+Q', click: actions.quit },
      ],
    },
    { label: 'Edit', role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { label: 'Reload', accelerator: 'CmdOrCtrl+R', click: actions.reload },
        ...(context.isPackaged
          ? []
          : [{ label: 'Developer Tools', accelerator: 'CmdOrCtrl+Alt+I', click: actions.toggleDevTools }]),
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { label: 'Window', role: 'windowMenu' },
    {
      label: 'Help',
      submenu: [
        { label: 'API Documentation', click: actions.openApiDocs },
        { label: 'Show Logs', click: actions.showLogs },
      ],
    },
  );
  return menu;
}

export interface TrayStatus {
  url: string;
  mode: 'attached' | 'started';
  /** The latest health poll (server-host.ts watchHealth). */
  health: 'running' | 'not-answering';
}

const HEALTH_TEXT: Record<TrayStatus['health'], string> = {
  running: 'running',
  'not-answering': 'not answering',
};

/** The tray icon's hover text: whether the server answers, at a glance. */
export function trayToolTip(status: TrayStatus): string {
  return `Stellwerk: ${HEALTH_TEXT[status.health]} (${status.url})`;
}

/** The tray keeps Stellwerk reachable with the window closed; Quit also stops a server the app started. */
export function trayMenu(status: TrayStatus, actions: MenuActions): MenuEntry[] {
  const where = status.mode === 'started' ? 'started by this app' : 'running as a service';
  return [
    { label: 'Open Stellwerk', click: actions.showWindow },
    { label: 'Open in Browser', click: actions.openInBrowser },
    { label: 'Show Logs', click: actions.showLogs },
    { type: 'separator' },
    { label: `Status: ${HEALTH_TEXT[status.health]}`, enabled: false },
    { label: `${status.url} (${where})`, enabled: false },
    { type: 'separator' },
    { label: status.mode === 'started' ? 'Quit and Stop Server' : 'Quit', click: actions.quit },
  ];
}
