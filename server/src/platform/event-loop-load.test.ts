import { describe, expect, it } from 'vitest';
import { EventLoopLoad } from './event-loop-load.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Keeps the event loop busy, as a saturated broker thread would.
  }
}

describe('event loop load', () => {
  it('is busy after consecutive windows the loop spent working, and not after an idle one', async () => {
    const load = new EventLoopLoad(0.8, 50, 2);
    load.start();
    try {
      expect(load.busy).toBe(false);
      // Busy through one whole window, then let the sampling timer run: one window is a burst.
      spin(60);
      await pause(0);
      expect(load.busy).toBe(false);
      // Busy through the next window too: now it is saturated.
      spin(60);
      await pause(0);
      expect(load.busy).toBe(true);
      await pause(150);
      expect(load.busy).toBe(false);
    } finally {
      load.stop();
    }
  });

  it('counts a single saturated window when asked to', async () => {
    const load = new EventLoopLoad(0.8, 50, 1);
    load.start();
    try {
      spin(60);
      await pause(0);
      expect(load.busy).toBe(true);
    } finally {
      load.stop();
    }
  });
});
