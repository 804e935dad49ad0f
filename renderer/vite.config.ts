import fs from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig, type Plugin } from 'vite';

/**
 * The console's build: `npm run build` writes it to dist/renderer, which the server serves at `/`.
 * `npx vite dev --config renderer/vite.config.ts` serves it with hot reload and forwards the APIs to a
 * running server (STELLWERK_URL, default http://127.0.0.1:8080), so the cookie stays same-origin.
 */
const target = process.env.STELLWERK_URL ?? 'http://127.0.0.1:8080';
const forwarded = Object.fromEntries(
  ['/api', '/xapi', '/hub', '/health', '/mqtt'].map((prefix) => [prefix, { target, ws: true }]),
);

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Writes `name.br` and `name.gz` next to every compressible hashed asset, at the highest levels
 * (once per build, so the time is spent here rather than per request). The server sends them with
 * Content-Encoding to a browser that accepts it; images and fonts are compressed already.
 * About 15 s of CPU: builds that only test behaviour skip it with STELLWERK_CONSOLE_PRECOMPRESS=off.
 */
function precompressAssets(): Plugin {
  let outDir = '';
  return {
    name: 'stellwerk-precompress-assets',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async writeBundle(_options, bundle) {
      if (process.env.STELLWERK_CONSOLE_PRECOMPRESS === 'off') return;
      const names = Object.keys(bundle).filter(
        (name) => name.startsWith('assets/') && /\.(?:m?js|css|json|svg|html|txt|wasm)$/.test(name),
      );
      await Promise.all(
        names.map(async (name) => {
          const file = path.join(outDir, name);
          const bytes = await fs.readFile(file);
          if (bytes.length < 1024) return;
          const [br, gz] = await Promise.all([
            brotli(bytes, {
              params: {
                [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
                [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
              },
            }),
            gzip(bytes, { level: 9 }),
          ]);
          if (br.length < bytes.length) await fs.writeFile(`${file}.br`, br);
          if (gz.length < bytes.length) await fs.writeFile(`${file}.gz`, gz);
        }),
      );
    },
  };
}
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
  plugins: [svelte({ configFile: false }), precompressAssets()],
  build: {
    outDir: process.env.STELLWERK_CONSOLE_OUT ?? path.resolve(import.meta.dirname, '..', 'dist', 'renderer'),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: { proxy: forwarded },
});
