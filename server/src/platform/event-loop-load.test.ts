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
  it('is busy after a window the loop spent working, and not after an idle one', async () => {
    const load = new EventLoopLoad(0.8, 50);
    load.start();
    try {
      expect(load.busy).toBe(false);
      // Busy through a whole window, then let the sampling timer run.
      for (let i = 0; i < 6; i++) spin(25);
      await pause(0);
      expect(load.busy).toBe(true);
      await pause(150);
      expect(load.busy).toBe(false);
    } finally {
      load.stop();
    }
  });
});
