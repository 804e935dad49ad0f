import path from 'node:path';
import { app, dialog, type BrowserWindow } from 'electron';
import { backUp, backupFileName, restoreFlow, restoreTarget } from './restore-flow.js';
import type { SpawnSpec } from './server-host.js';

/**
 * "Back up now…" and "Restore…": the save/open dialogs and the result boxes around
 * restore-flow.ts, which runs the `stellwerk` CLI. One operation at a time.
 */

export interface BackupMenuOptions {
  window: () => BrowserWindow | undefined;
  /** How the server the app runs is started (its Node, environment, data directory). */
  server: () => { spec: SpawnSpec; dataDir: string } | undefined;
  /** True when STELLWERK_DATA_DIR comes from the environment: a restore cannot switch directories. */
  dataDirFixed: boolean;
  stopServer: () => Promise<void>;
  startServer: () => Promise<void>;
  useDataDir: (dataDir: string) => void;
  note: (line: string) => void;
}

export function backupMenu(options: BackupMenuOptions): { backUpNow: () => void; restore: () => void } {
  let busy = false;
  const parentOf = () => {
    const win = options.window();
    return win && !win.isDestroyed() ? win : undefined;
  };
  const box = async (type: 'info' | 'error', message: string, detail: string) => {
    const parent = parentOf();
    const box = { type, title: 'Stellwerk', message, detail, buttons: ['OK'] };
    await (parent ? dialog.showMessageBox(parent, box) : dialog.showMessageBox(box));
  };
  const once = (task: () => Promise<void>) => () => {
    if (busy) {
      void box('info', 'A backup or restore is already running.', 'Wait until it has finished.');
      return;
    }
    busy = true;
    task()
      .catch((error: unknown) =>
        box('error', 'Stellwerk', error instanceof Error ? error.message : String(error)),
      )
      .finally(() => (busy = false));
  };

  const backUpNow = once(async () => {
    const server = options.server();
    if (!server) return;
    const defaultPath = path.join(app.getPath('documents'), backupFileName(new Date()));
    const parent = parentOf();
    const save = { title: 'Back up Stellwerk', defaultPath, buttonLabel: 'Back Up' };
    const chosen = await (parent ? dialog.showSaveDialog(parent, save) : dialog.showSaveDialog(save));
    if (chosen.canceled || !chosen.filePath) return;
    options.note(`[desktop] backup to ${chosen.filePath}`);
    const result = await backUp(server.spec, chosen.filePath, {
      onOutput: (l) => options.note(`[backup] ${l}`),
    });
    if (result.ok) await box('info', 'Backup finished', result.message);
    else await box('error', 'Backup failed', result.message);
  });

  const restore = once(async () => {
    const server = options.server();
    if (!server) return;
    if (options.dataDirFixed) {
      await box(
        'error',
        'Restore is not available here',
        'STELLWERK_DATA_DIR is set in the environment, so the app cannot switch to a restored data directory. Run `stellwerk restore FILE` in a terminal instead.',
      );
      return;
    }
    const parent = parentOf();
    const pick = { title: 'Restore Stellwerk from a backup', properties: ['openFile' as const] };
    const picked = await (parent ? dialog.showOpenDialog(parent, pick) : dialog.showOpenDialog(pick));
    const archive = picked.filePaths[0];
    if (picked.canceled || !archive) return;
    const target = restoreTarget(server.dataDir, new Date());
    const confirm = {
      type: 'question' as const,
      title: 'Stellwerk',
      message: 'Restore this backup?',
      detail: `${archive}\n\nThe server stops during the restore. The backup is restored into the new folder ${target}, and Stellwerk then runs on it. The current data stays in ${server.dataDir}.`,
      buttons: ['Restore', 'Cancel'],
      defaultId: 0,
      cancelId: 1,
    };
    const answer = await (parent ? dialog.showMessageBox(parent, confirm) : dialog.showMessageBox(confirm));
    if (answer.response !== 0) return;
    options.note(`[desktop] restore ${archive} into ${target}`);
    const outcome = await restoreFlow({
      server: server.spec,
      archive,
      currentDataDir: server.dataDir,
      target,
      stopServer: options.stopServer,
      startServer: options.startServer,
      useDataDir: options.useDataDir,
      cli: { onOutput: (l) => options.note(`[restore] ${l}`) },
    });
    const restarted = outcome.startError
      ? `\n\nThe server did not start again: ${outcome.startError}`
      : `\n\nStellwerk runs on ${outcome.dataDir}.`;
    if (outcome.ok) await box('info', 'Restore finished', outcome.message + restarted);
    else await box('error', 'Restore failed; nothing was changed', outcome.message + restarted);
  });

  return { backUpNow, restore };
}
