/**
 * Runs in the page's isolated world before the console loads. Sandboxed preloads must be
 * CommonJS, hence `.cts`. The bridge is deliberately narrow: the console is the same web app
 * remote browsers get and talks to the server over HTTP; the desktop only adds what a browser
 * cannot know. Never expose ipcRenderer itself or a generic "send" function.
 */
import electron = require('electron');

electron.contextBridge.exposeInMainWorld('stellwerkDesktop', {
  isDesktop: true,
  /** `{ url, mode: 'attached' | 'started' }`: which server the app shows and whether it started it. */
  serverInfo: (): Promise<unknown> => electron.ipcRenderer.invoke('stellwerk:server-info'),
});
