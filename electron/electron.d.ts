/**
 * The subset of Electron's API the desktop shell uses, declared locally.
 *
 * Why: the `electron` npm package downloads a ~100 MB binary in its install script, which fails
 * on build machines without internet and would make `npm ci` fragile. The shell's logic lives in
 * plain modules tested without Electron; the few files that touch Electron (main.ts,
 * preload.cts) only need these declarations to type-check. `npm run dist` fetches the real
 * Electron (see docs/desktop.md). Signatures follow Electron's own typings; add what you use.
 * Delete this file if `electron` ever becomes a devDependency: its typings then take over.
 */
declare module 'electron' {
  interface ElectronEvent {
    preventDefault(): void;
  }

  interface Rectangle {
    x: number;
    y: number;
    width: number;
    height: number;
  }

  interface Display {
    id: number;
    workArea: Rectangle;
  }

  interface WebPreferences {
    preload?: string;
    contextIsolation?: boolean;
    nodeIntegration?: boolean;
    nodeIntegrationInWorker?: boolean;
    nodeIntegrationInSubFrames?: boolean;
    sandbox?: boolean;
    webviewTag?: boolean;
    webSecurity?: boolean;
    allowRunningInsecureContent?: boolean;
    navigateOnDragDrop?: boolean;
    spellcheck?: boolean;
  }

  interface BrowserWindowConstructorOptions {
    x?: number;
    y?: number;
    width?: number;
    height?: number;
    minWidth?: number;
    minHeight?: number;
    show?: boolean;
    title?: string;
    icon?: NativeImage | string;
    backgroundColor?: string;
    webPreferences?: WebPreferences;
  }

  interface HandlerDetails {
    url: string;
  }

  interface Session {
    setPermissionRequestHandler(
      handler:
        ((webContents: WebContents, permission: string, callback: (granted: boolean) => void) => void) | null,
    ): void;
    setPermissionCheckHandler(
      handler: ((webContents: WebContents | null, permission: string) => boolean) | null,
    ): void;
  }

  interface WebContents {
    readonly session: Session;
    on(event: 'will-navigate' | 'will-redirect', listener: (event: ElectronEvent, url: string) => void): this;
    on(event: 'will-attach-webview', listener: (event: ElectronEvent) => void): this;
    setWindowOpenHandler(
      handler: (details: HandlerDetails) => { action: 'deny' } | { action: 'allow' },
    ): void;
    reload(): void;
    toggleDevTools(): void;
    getURL(): string;
  }

  class BrowserWindow {
    constructor(options?: BrowserWindowConstructorOptions);
    readonly webContents: WebContents;
    loadURL(url: string): Promise<void>;
    show(): void;
    focus(): void;
    restore(): void;
    maximize(): void;
    isMinimized(): boolean;
    isMaximized(): boolean;
    isDestroyed(): boolean;
    getNormalBounds(): Rectangle;
    on(event: 'close' | 'closed' | 'ready-to-show', listener: (event: ElectronEvent) => void): this;
    once(event: 'ready-to-show', listener: () => void): this;
  }

  interface NativeImage {
    isEmpty(): boolean;
  }

  interface MenuItemConstructorOptions {
    label?: string;
    role?:
      | 'about'
      | 'appMenu'
      | 'copy'
      | 'cut'
      | 'editMenu'
      | 'front'
      | 'hide'
      | 'hideOthers'
      | 'minimize'
      | 'paste'
      | 'quit'
      | 'redo'
      | 'resetZoom'
      | 'selectAll'
      | 'services'
      | 'togglefullscreen'
      | 'undo'
      | 'unhide'
      | 'windowMenu'
      | 'zoom'
      | 'zoomIn'
      | 'zoomOut';
    type?: 'normal' | 'separator' | 'submenu';
    accelerator?: string;
    enabled?: boolean;
    click?: () => void;
    submenu?: MenuItemConstructorOptions[];
  }

  class Menu {
    static buildFromTemplate(template: MenuItemConstructorOptions[]): Menu;
    static setApplicationMenu(menu: Menu | null): void;
  }

  class Tray {
    constructor(image: NativeImage | string);
    setToolTip(toolTip: string): void;
    setContextMenu(menu: Menu | null): void;
    on(event: 'click', listener: () => void): this;
    destroy(): void;
  }

  interface IpcMainInvokeEvent {
    readonly senderFrame: { readonly url: string } | null;
  }

  interface App {
    readonly isPackaged: boolean;
    requestSingleInstanceLock(): boolean;
    whenReady(): Promise<void>;
    quit(): void;
    exit(exitCode?: number): void;
    getPath(name: 'userData' | 'logs'): string;
    getAppPath(): string;
    getVersion(): string;
    getName(): string;
    on(event: 'second-instance' | 'activate' | 'window-all-closed', listener: () => void): this;
    on(event: 'before-quit', listener: (event: ElectronEvent) => void): this;
    on(event: 'web-contents-created', listener: (event: ElectronEvent, contents: WebContents) => void): this;
  }

  export const app: App;
  export { BrowserWindow, Menu, Tray };
  export type {
    BrowserWindowConstructorOptions,
    Display,
    MenuItemConstructorOptions,
    Rectangle,
    WebContents,
    WebPreferences,
  };
  export const nativeImage: { createFromPath(path: string): NativeImage; createEmpty(): NativeImage };
  export const shell: {
    openExternal(url: string): Promise<void>;
    /** Opens a file with the desktop's default program; resolves to an error message, or '' on success. */
    openPath(path: string): Promise<string>;
  };
  export const dialog: { showErrorBox(title: string, content: string): void };
  export const screen: { getAllDisplays(): Display[]; getPrimaryDisplay(): Display };
  export const ipcMain: {
    handle(channel: string, listener: (event: IpcMainInvokeEvent, ...args: unknown[]) => unknown): void;
  };
  export const ipcRenderer: { invoke(channel: string, ...args: unknown[]): Promise<unknown> };
  export const contextBridge: { exposeInMainWorld(apiKey: string, api: Record<string, unknown>): void };
}
