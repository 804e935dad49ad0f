import { describe, expect, it } from 'vitest';
import { applicationMenu, trayMenu, trayToolTip, type MenuActions, type MenuEntry } from './menu.js';

function recorder() {
  const calls: string[] = [];
  const record = (name: string) => () => calls.push(name);
  const actions: MenuActions = {
    showWindow: record('showWindow'),
    openApiDocs: record('openApiDocs'),
    openInBrowser: record('openInBrowser'),
    showLogs: record('showLogs'),
    openSettings: record('openSettings'),
    backUp: record('backUp'),
    restore: record('restore'),
    reload: record('reload'),
    toggleDevTools: record('toggleDevTools'),
    quit: record('quit'),
  };
  return { calls, actions };
}

const flatten = (items: MenuEntry[]): MenuEntry[] =>
  items.flatMap((item) => [item, ...flatten(item.submenu ?? [])]);
const find = (items: MenuEntry[], label: string) => flatten(items).find((i) => i.label === label);

describe('application menu', () => {
  it('starts with the app menu on macOS only', () => {
    const { actions } = recorder();
    expect(
      applicationMenu(
        { platform: 'darwin', appName: 'Stellwerk', isPackaged: true, managesServer: true },
        actions,
      )[0],
    ).toEqual({
      label: 'Stellwerk',
      role: 'appMenu',
    });
    expect(
      applicationMenu(
        { platform: 'linux', appName: 'Stellwerk', isPackaged: true, managesServer: true },
        actions,
      )[0]?.label,
    ).toBe('File');
  });

  it('offers developer tools only in development', () => {
    const { actions } = recorder();
    expect(
      find(
        applicationMenu({ platform: 'win32', appName: 'S', isPackaged: true, managesServer: true }, actions),
        'Developer Tools',
      ),
    ).toBeUndefined();
    expect(
      find(
        applicationMenu({ platform: 'win32', appName: 'S', isPackaged: false, managesServer: true }, actions),
        'Developer Tools',
      ),
    ).toBeDefined();
  });

  it('wires every clickable item to an action, and every item has a label, role or separator', () => {
    const { calls, actions } = recorder();
    const items = flatten(
      applicationMenu({ platform: 'linux', appName: 'S', isPackaged: false, managesServer: true }, actions),
    );
    for (const item of items) expect(item.label ?? item.role ?? item.type).toBeDefined();
    for (const item of items) item.click?.();
    expect(calls.sort()).toEqual([
      'backUp',
      'openApiDocs',
      'openInBrowser',
      'openSettings',
      'quit',
      'reload',
      'restore',
      'showLogs',
      'toggleDevTools',
    ]);
  });

  it('offers settings, backup and restore only for a server the app runs itself', () => {
    const { actions } = recorder();
    const labels = ['Settings…', 'Back up now…', 'Restore…'];
    const own = applicationMenu(
      { platform: 'linux', appName: 'S', isPackaged: true, managesServer: true },
      actions,
    );
    const service = applicationMenu(
      { platform: 'linux', appName: 'S', isPackaged: true, managesServer: false },
      actions,
    );
    expect(labels.map((label) => find(own, label)?.enabled)).toEqual([true, true, true]);
    expect(labels.map((label) => find(service, label)?.enabled)).toEqual([false, false, false]);
  });
});

describe('tray menu', () => {
  const url = 'http://127.0.0.1:8080';

  it('says whether quitting also stops the server', () => {
    const { calls, actions } = recorder();
    const started = trayMenu({ url, mode: 'started', health: 'running' }, actions);
    expect(find(started, 'Quit and Stop Server')).toBeDefined();
    expect(find(started, 'http://127.0.0.1:8080 (started by this app)')?.enabled).toBe(false);
    const attached = trayMenu({ url, mode: 'attached', health: 'running' }, actions);
    find(attached, 'Quit')?.click?.();
    find(attached, 'Open Stellwerk')?.click?.();
    expect(calls).toEqual(['quit', 'showWindow']);
  });

  it('shows the server status and offers open in browser and the logs', () => {
    const { calls, actions } = recorder();
    const running = trayMenu({ url, mode: 'attached', health: 'running' }, actions);
    expect(find(running, 'Status: running')?.enabled).toBe(false);
    const down = trayMenu({ url, mode: 'started', health: 'not-answering' }, actions);
    expect(find(down, 'Status: not answering')?.enabled).toBe(false);
    expect(find(down, 'Status: running')).toBeUndefined();
    find(down, 'Open in Browser')?.click?.();
    find(down, 'Show Logs')?.click?.();
    expect(calls).toEqual(['openInBrowser', 'showLogs']);
    expect(trayToolTip({ url, mode: 'started', health: 'not-answering' })).toBe(
      'Stellwerk: not answering (http://127.0.0.1:8080)',
    );
  });
});
