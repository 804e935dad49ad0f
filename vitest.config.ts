import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'server/src/**/*.test.ts',
            'electron/**/*.test.ts',
            'scripts/**/*.test.ts',
            'renderer/src/lib/**/*.test.ts',
          ],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          maxWorkers: 2,
        },
      },
      {
        test: {
          // Playwright with Debian's Chromium against a spawned server (the console in renderer/).
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          // A page's first render waits for its API reads; a busy machine needs more than 1 s.
          expect: { poll: { timeout: 5_000 } },
          globalSetup: ['test/integration/global-setup.ts', 'test/e2e/support/console-build.global.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
          // Two at a time: each file waits mostly on its own server and browser; one at a time made
          // the console's suite the longest part of CI.
          maxWorkers: 2,
        },
      },
    ],
  },
});
