import type { WebContents, WebPreferences } from 'electron';

/**
 * The window shows a web page from the Stellwerk server, so it is treated like a browser tab:
 * no Node in the page, an isolated and sandboxed preload, no webviews, no navigation away from
 * the server's origin, no permission prompts. Links to other sites open in the system browser.
 * Only types come from 'electron' here, so this module is unit-tested without Electron.
 */

export const SECURE_WEB_PREFERENCES = {
  contextIsolation: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  nodeIntegrationInSubFrames: false,
  sandbox: true,
  webviewTag: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  navigateOnDragDrop: false,
} as const satisfies WebPreferences;

const originOf = (url: string): string | undefined => {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.origin : undefined;
  } catch {
    return undefined;
  }
};

/** Whether the window may show `target`: only pages of the Stellwerk server it was opened on. */
export function isAllowedNavigation(target: string, appUrl: string): boolean {
  const origin = originOf(target);
  return origin !== undefined && origin === originOf(appUrl);
}

/** Links the system browser (or mail program) may open instead; never file:, javascript: or custom schemes. */
export function isExternalLink(target: string): boolean {
  try {
    return ['http:', 'https:', 'mailto:'].includes(new URL(target).protocol);
  } catch {
    return false;
  }
}

export type NavigationDecision = 'allow' | 'open-external' | 'block';

export function navigationDecision(target: string, appUrl: string): NavigationDecision {
  if (isAllowedNavigation(target, appUrl)) return 'allow';
  return isExternalLink(target) ? 'open-external' : 'block';
}

/** What hardenWebContents needs from a WebContents; a structural subset so it is testable. */
export type HardenableContents = Pick<WebContents, 'on' | 'setWindowOpenHandler' | 'session'>;

/**
 * Applies the rules to one WebContents (every window and frame the app creates). In-app
 * navigation within the server's origin proceeds; anything else is stopped and, when it is a
 * normal link, handed to `openExternal`. New windows are never created by the page.
 */
export function hardenWebContents(
  contents: HardenableContents,
  /** A function when the server can move (a new port from the settings window). */
  appUrl: string | (() => string),
  openExternal: (url: string) => void,
): void {
  const current = typeof appUrl === 'function' ? appUrl : () => appUrl;
  const guard = (event: { preventDefault(): void }, url: string) => {
    const decision = navigationDecision(url, current());
    if (decision === 'allow') return;
    event.preventDefault();
    if (decision === 'open-external') openExternal(url);
  };
  contents.on('will-navigate', guard);
  contents.on('will-redirect', guard);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    const decision = navigationDecision(url, current());
    if (decision !== 'block') openExternal(url);
    return { action: 'deny' };
  });
  // Camera, geolocation, notifications …: the console needs none of them.
  contents.session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  contents.session.setPermissionCheckHandler(() => false);
}

/**
 * Whether an IPC message comes from the settings page the app loaded from its own files (query
 * and fragment aside): the settings channels can rewrite the server's configuration, so no other
 * page, not even the console, may use them.
 */
export function isSettingsPage(frameUrl: string | undefined, pageUrl: string): boolean {
  if (!frameUrl) return false;
  try {
    const frame = new URL(frameUrl);
    const page = new URL(pageUrl);
    return (
      frame.protocol === 'file:' &&
      page.protocol === 'file:' &&
      frame.pathname === page.pathname &&
      frame.host === page.host
    );
  } catch {
    return false;
  }
}
