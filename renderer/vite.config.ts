import { readFileSync } from 'node:fs';
import path from 'node:path';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

/**
 * The console's build: `npm run build` writes it to dist/renderer, which the server serves at `/`.
 * `npx vite dev --config renderer/vite.config.ts` serves it with hot reload and forwards the APIs to a
 * running server (STELLWERK_URL, default http://127.0.0.1:8080), so the cookie stays same-origin.
 */
const target = process.env.STELLWERK_URL ?? 'http://127.0.0.1:8080';
const forwarded = Object.fromEntries(
  ['/api', '/xapi', '/hub', '/health', '/mqtt'].map((prefix) => [prefix, { target, ws: true }]),
);

const { version } = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '..', 'package.json'), 'utf8'),
) as {
  version: string;
};

export default defineConfig({
  root: import.meta.dirname,
  // The version the console shows: the one of the package it is built and shipped with.
  define: { __STELLWERK_VERSION__: JSON.stringify(version) },
  base: '/',
  plugins: [svelte({ configFile: false })],
  build: {
    outDir: process.env.STELLWERK_CONSOLE_OUT ?? path.resolve(import.meta.dirname, '..', 'dist', 'renderer'),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: { proxy: forwarded },
});
