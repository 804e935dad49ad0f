import { ApiError } from '../api/client';

/** One thing that blocks a deletion, from a `409 DELETE_BLOCKED` body's `details`. */
export interface Blocker {
  type?: string;
  id?: string;
  title?: string;
  name?: string;
  email?: string;
  key?: string;
  twinId?: string;
  jobType?: string;
  status?: string;
}

/** The blockers of a refused deletion, or none for any other outcome. */
export const deleteBlockers = (error: unknown): Blocker[] =>
  error instanceof ApiError && error.code === 'DELETE_BLOCKED' ? (error.details as Blocker[]) : [];

/**
 * The state of one save in an editor or dialog: `busy` while it runs (for the spinner and the disabled
 * button), the server's `error` (for ErrorNotice), and `saved` for a few seconds after it succeeded.
 * Every editor and confirmation uses this instead of its own busy / error / try-finally.
 */
export class EditorSave {
  busy = $state(false);
  error = $state<unknown>(null);
  saved = $state(false);
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly savedForMs = 4000) {}

  /** What blocks the last refused deletion (empty otherwise). */
  get blockers(): Blocker[] {
    return deleteBlockers(this.error);
  }

  /** Forgets the last outcome (a dialog opening again). */
  reset(): void {
    this.error = null;
    this.saved = false;
    clearTimeout(this.timer);
  }

  /** Runs `work`; its result, or undefined when it failed (the failure is in `error`). */
  async run<T>(work: () => Promise<T>): Promise<T | undefined> {
    this.busy = true;
    this.reset();
    try {
      const result = await work();
      this.saved = true;
      this.timer = setTimeout(() => (this.saved = false), this.savedForMs);
      return result;
    } catch (failure) {
      this.error = failure;
      return undefined;
    } finally {
      this.busy = false;
    }
  }
}
