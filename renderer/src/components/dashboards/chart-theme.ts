/**
 * Chart colours per theme. Fixed values mirroring app.css's tokens rather than reading the CSS
 * variables: the page's data-theme may change after a chart's effect has run.
 */
export interface ChartColours {
  text: string;
  muted: string;
  border: string;
  track: string;
  accent: string;
  surface: string;
  success: string;
  danger: string;
  series: string[];
}

const LIGHT: ChartColours = {
  text: '#162033',
  muted: '#5a6679',
  border: '#dde3ee',
  track: '#e8edf5',
  accent: '#2563eb',
  surface: '#ffffff',
  success: '#067647',
  danger: '#b42318',
  series: ['#2563eb', '#7c3aed', '#0891b2', '#d97706', '#16a34a', '#db2777', '#64748b'],
};

const DARK: ChartColours = {
  text: '#e6ebf5',
  muted: '#9aa6bd',
  border: '#2a3550',
  track: '#222c42',
  accent: '#6d9bff',
  surface: '#151d2e',
  success: '#6fe0a8',
  danger: '#ff8a80',
  series: ['#6d9bff', '#b392ff', '#4fd1e8', '#f6b155', '#6fe0a8', '#f58bc0', '#a3b1c6'],
};

export const chartColours = (theme: 'light' | 'dark'): ChartColours => (theme === 'dark' ? DARK : LIGHT);
