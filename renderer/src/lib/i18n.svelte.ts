import { de } from '../i18n/de';
import { en, type Messages } from '../i18n/en';

export type Language = 'en' | 'de';
export const LANGUAGES: { code: Language; label: string }[] = [
  { code: 'en', label: 'English' },
  { code: 'de', label: 'Deutsch' },
];

const dictionaries: Record<Language, Messages> = { en, de };
const STORAGE_KEY = 'stellwerk.language';

function initialLanguage(): Language {
  const stored = localStorage.getItem(STORAGE_KEY);
  if (stored === 'en' || stored === 'de') return stored;
  return navigator.language.toLowerCase().startsWith('de') ? 'de' : 'en';
}

/** The console's language: chosen by the user and kept in localStorage, else the browser's. */
class I18n {
  language = $state<Language>(initialLanguage());

  /** The texts of the current language; reading it inside a component makes the text reactive. */
  get t(): Messages {
    return dictionaries[this.language];
  }

  /** Shows a language on this page only, not kept (a public dashboard's `language` parameter). */
  use(language: Language): void {
    this.language = language;
    document.documentElement.lang = language;
  }

  set(language: Language): void {
    this.language = language;
    localStorage.setItem(STORAGE_KEY, language);
    document.documentElement.lang = language;
  }
}

export const i18n = new I18n();

/** Fills `{name}` placeholders: format(t.home.title, { name }). */
export function format(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (match, key: string) => (key in values ? String(values[key]) : match));
}
