import { i18n } from './i18n.svelte';
import { UnsavedChanges } from './unsaved-changes';

/** The console's guard (lib/unsaved-changes.ts); the router asks it before every page change. */
export const unsavedChanges = new UnsavedChanges(() => window.confirm(i18n.t.console.unsaved.confirm));
window.addEventListener('beforeunload', unsavedChanges.onBeforeUnload);

/**
 * Call while an editor component initialises: leaving asks first while `isDirty()` is true, until
 * the component is destroyed.
 */
export function guardUnsaved(isDirty: () => boolean): void {
  $effect(() => unsavedChanges.track(isDirty));
}
