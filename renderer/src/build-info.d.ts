/** Set by renderer/vite.config.ts from package.json at build time. */
declare const __STELLWERK_VERSION__: string;
