import type { Dialog, Page } from 'playwright-core';

/**
 * The browser's own dialogs (alert, confirm, prompt) a page opens while watched, each dismissed.
 * The console asks in dialogs of its own, so an action that asks first leaves `messages` empty.
 */
export function watchNativeDialogs(page: Page): { messages: string[]; stop(): void } {
  const messages: string[] = [];
  const onDialog = (dialog: Dialog) => {
    messages.push(dialog.message());
    void dialog.dismiss();
  };
  page.on('dialog', onDialog);
  return { messages, stop: () => page.off('dialog', onDialog) };
}
