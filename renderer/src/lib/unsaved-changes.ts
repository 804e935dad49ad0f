/** The part of a `beforeunload` event the guard uses. */
export interface UnloadEvent {
  preventDefault(): void;
  returnValue: unknown;
}

/**
 * The one guard for unsaved changes: editors register a check saying whether they hold changes
 * that are not saved; leaving the page (a hash-route change inside the console, or closing or
 * reloading the window) asks first while any check says yes. Changes of the address's query alone
 * (a filter, a map view) stay on the page and never ask.
 */
export class UnsavedChanges {
  private readonly checks = new Set<() => boolean>();

  /** `ask` puts the question to the user and answers whether to leave anyway. */
  constructor(private readonly ask: () => boolean) {}

  /** Follows an editor's dirty check until the returned function is called (the editor's teardown). */
  track(isDirty: () => boolean): () => void {
    this.checks.add(isDirty);
    return () => void this.checks.delete(isDirty);
  }

  get pending(): boolean {
    for (const isDirty of this.checks) if (isDirty()) return true;
    return false;
  }

  /** Whether moving from `from` to `to` (route paths) may go ahead; asks only when it must. */
  mayLeave(from: string, to: string): boolean {
    if (from === to || !this.pending) return true;
    return this.ask();
  }

  /** For `beforeunload`: the browser's own "leave site?" question while something is unsaved. */
  readonly onBeforeUnload = (event: UnloadEvent): void => {
    if (!this.pending) return;
    event.preventDefault();
    // Older Chromium builds (Electron) ask only when returnValue is set.
    event.returnValue = '';
  };
}
