/**
 * How the console writes a value: numbers in the UI language's notation (German `4,05`, English
 * `4.05`), with the state's own decimals when it has them, otherwise up to three decimals, or four
 * significant digits where that shows more (`4.05`, `123.456`, `0.001235`); then the unit.
 * Every place that shows a state's or device's value goes through here.
 */

/** The most decimals a state may ask for; more would show floating-point noise. */
export const MAX_DECIMALS = 10;
const SIGNIFICANT_DIGITS = 4;
const DEFAULT_DECIMALS = 3;

/** What a state says about how its value is shown. */
export interface ValueFormat {
  unit?: string | null;
  /** Fixed decimals (0–10); null or absent: significant digits as above. */
  decimals?: number | null;
  valueType?: string;
}

/** Texts for booleans and a missing value, in the UI language. */
export interface ValueTexts {
  true: string;
  false: string;
  none: string;
}

const cache = new Map<string, Intl.NumberFormat>();

function numberFormat(language: string, decimals: number | null): Intl.NumberFormat {
  const key = `${language}|${decimals ?? ''}`;
  let found = cache.get(key);
  if (!found) {
    found = new Intl.NumberFormat(
      language,
      decimals === null
        ? {
            // Both limits, the more precise wins: 4.050127 reads 4.05, 123.456 keeps its decimals, 0.0012345 reads 0.001235.
            maximumSignificantDigits: SIGNIFICANT_DIGITS,
            maximumFractionDigits: DEFAULT_DECIMALS,
            roundingPriority: 'morePrecision',
          }
        : { minimumFractionDigits: decimals, maximumFractionDigits: decimals },
    );
    cache.set(key, found);
  }
  return found;
}

/** A valid decimals setting, else null (then significant digits apply). */
export function decimalsSetting(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isInteger(value)) return null;
  return value >= 0 && value <= MAX_DECIMALS ? value : null;
}

/** A number in the language's notation; integer value types never show decimals. */
export function formatNumber(value: number, language: string, format: ValueFormat = {}): string {
  if (!Number.isFinite(value)) return String(value);
  const decimals = format.valueType === 'integer' ? 0 : decimalsSetting(format.decimals);
  return numberFormat(language, decimals).format(value);
}

/** Number and unit with a no-break space between them, as the language writes them (`4,05 bar`). */
export function withUnit(text: string, unit: string | null | undefined): string {
  const trimmed = unit?.trim();
  return trimmed ? `${text}\u00a0${trimmed}` : text;
}

/**
 * A value as text: numbers (and numeric text of a numeric state) formatted with the unit, booleans
 * in words, other text as it is, objects as JSON.
 */
export function formatValue(
  value: unknown,
  language: string,
  texts: ValueTexts,
  format: ValueFormat = {},
): string {
  if (value === null || value === undefined) return texts.none;
  if (typeof value === 'number') return withUnit(formatNumber(value, language, format), format.unit);
  if (typeof value === 'boolean') return value ? texts.true : texts.false;
  if (typeof value === 'string') {
    const numeric = (format.valueType === 'number' || format.valueType === 'integer') && value.trim() !== '';
    const number = numeric ? Number(value) : NaN;
    return Number.isFinite(number) ? withUnit(formatNumber(number, language, format), format.unit) : value;
  }
  return JSON.stringify(value) ?? texts.none;
}

/** A state's display settings: its unit and value type, decimals from `meta.decimals` (or its random source's). */
export function valueFormatOf(state: {
  unit?: string | null;
  valueType?: string;
  meta?: Record<string, unknown> | null;
  source?: Record<string, unknown> | null;
}): ValueFormat {
  const decimals =
    decimalsSetting(state.meta?.decimals) ??
    (state.source?.type === 'random' ? decimalsSetting(state.source.decimals) : null);
  return { unit: state.unit ?? null, decimals, ...(state.valueType ? { valueType: state.valueType } : {}) };
}
