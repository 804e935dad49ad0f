/**
 * Preload of the settings window (sandboxed, hence CommonJS). Three calls, each a fixed channel
 * the main process checks against the sender: never ipcRenderer itself or a generic "send".
 */
import electron = require('electron');

electron.contextBridge.exposeInMainWorld('stellwerkSettings', {
  load: (): Promise<unknown> => electron.ipcRenderer.invoke('stellwerk-settings:load'),
  save: (values: unknown): Promise<unknown> => electron.ipcRenderer.invoke('stellwerk-settings:save', values),
  choosePath: (kind: unknown): Promise<unknown> =>
    electron.ipcRenderer.invoke('stellwerk-settings:choose-path', kind === 'folder' ? 'folder' : 'file'),
});
