import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  hardenWebContents,
  isAllowedNavigation,
  isSettingsPage,
  navigationDecision,
  SECURE_WEB_PREFERENCES,
  type HardenableContents,
} from './security.js';

const APP = 'http://127.0.0.1:8080';

describe('window security', () => {
  it('isolates the page from Node and disables webviews', () => {
    expect(SECURE_WEB_PREFERENCES).toMatchObject({
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
      webviewTag: false,
      webSecurity: true,
    });
  });

  it.each([
    ['http://127.0.0.1:8080/dashboards/1', true],
    ['http://127.0.0.1:8080', true],
    ['http://127.0.0.1:8081/', false],
    ['https://127.0.0.1:8080/', false],
    ['http://localhost:8080/', false],
    ['http://127.0.0.1:8080.evil.example/', false],
    ['file:///etc/passwd', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('navigation to %s allowed: %s', (target, allowed) => {
    expect(isAllowedNavigation(target, APP)).toBe(allowed);
  });

  it('sends ordinary links to the system browser and blocks everything else', () => {
    expect(navigationDecision(`${APP}/twins`, APP)).toBe('allow');
    expect(navigationDecision('https://docs.example.com/', APP)).toBe('open-external');
    expect(navigationDecision('mailto:ops@example.com', APP)).toBe('open-external');
    expect(navigationDecision('file:///C:/Windows/system32/calc.exe', APP)).toBe('block');
    expect(navigationDecision('ms-settings:privacy', APP)).toBe('block');
  });
});

/**
 * Electron cannot be installed here, so hardenWebContents is exercised with an event emitter
 * standing in for WebContents: this checks the wiring (which events, what the handlers do).
 */
describe('hardenWebContents', () => {
  function harden(appUrl: string | (() => string) = APP) {
    const emitter = new EventEmitter();
    const opened: string[] = [];
    let windowOpenHandler: ((details: { url: string }) => { action: string }) | undefined;
    let permissionHandler:
      ((wc: unknown, permission: string, callback: (granted: boolean) => void) => void) | null = null;
    const contents = {
      on: (event: string, listener: (...args: unknown[]) => void) => emitter.on(event, listener),
      setWindowOpenHandler: (handler: typeof windowOpenHandler) => (windowOpenHandler = handler),
      session: {
        setPermissionRequestHandler: (handler: typeof permissionHandler) => (permissionHandler = handler),
        setPermissionCheckHandler: () => {},
      },
    } as unknown as HardenableContents;
    hardenWebContents(contents, appUrl, (url) => opened.push(url));
    const navigate = (event: string, url: string) => {
      let prevented = false;
      emitter.emit(event, { preventDefault: () => (prevented = true) }, url);
      return prevented;
    };
    return {
      navigate,
      opened,
      open: (url: string) => windowOpenHandler!({ url }),
      permission: () => permissionHandler,
    };
  }

  it('lets in-app navigation through and stops the rest', () => {
    const h = harden();
    expect(h.navigate('will-navigate', `${APP}/accounts`)).toBe(false);
    expect(h.navigate('will-navigate', 'https://example.com/')).toBe(true);
    expect(h.navigate('will-redirect', 'file:///etc/passwd')).toBe(true);
    expect(h.navigate('will-attach-webview', '')).toBe(true);
    expect(h.opened).toEqual(['https://example.com/']);
  });

  it('never opens new windows; links go to the system browser', () => {
    const h = harden();
    expect(h.open('https://example.com/manual')).toEqual({ action: 'deny' });
    expect(h.open('javascript:alert(1)')).toEqual({ action: 'deny' });
    expect(h.opened).toEqual(['https://example.com/manual']);
  });

  it('follows the server to its new address after a restart on another port', () => {
    let url = APP;
    const h = harden(() => url);
    url = 'http://127.0.0.1:9090';
    expect(h.navigate('will-navigate', 'http://127.0.0.1:9090/twins')).toBe(false);
    expect(h.navigate('will-navigate', `${APP}/twins`)).toBe(true);
  });

  it('answers settings messages only from the settings page itself', () => {
    const page = 'file:///opt/Stellwerk/resources/app/dist/electron/settings-window/settings.html';
    expect(isSettingsPage(page, page)).toBe(true);
    expect(isSettingsPage(`${page}#top`, page)).toBe(true);
    expect(isSettingsPage(`${APP}/settings.html`, page)).toBe(false);
    expect(isSettingsPage('file:///tmp/settings.html', page)).toBe(false);
    expect(isSettingsPage(undefined, page)).toBe(false);
  });

  it('denies permission requests', () => {
    const granted: boolean[] = [];
    harden().permission()!(null, 'media', (g) => granted.push(g));
    expect(granted).toEqual([false]);
  });
});
