import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SIZE,
  MIN_SIZE,
  parseWindowState,
  readWindowState,
  restoreBounds,
  writeWindowState,
  type Rect,
} from './window-state.js';

const LAPTOP: Rect = { x: 0, y: 0, width: 1920, height: 1040 };
const RIGHT_MONITOR: Rect = { x: 1920, y: 0, width: 2560, height: 1400 };

describe('restoreBounds', () => {
  it('opens centred on the primary display the first time', () => {
    expect(restoreBounds(undefined, [LAPTOP])).toEqual({
      bounds: { x: 320, y: 110, ...DEFAULT_SIZE },
      maximized: false,
    });
  });

  it('restores a saved position that is still visible, on any display', () => {
    const saved = { bounds: { x: 2100, y: 100, width: 1600, height: 1000 }, maximized: true };
    expect(restoreBounds(saved, [LAPTOP, RIGHT_MONITOR])).toEqual(saved);
  });

  it('falls back to the primary display when the saved one is gone', () => {
    const saved = { bounds: { x: 2100, y: 100, width: 1600, height: 1000 }, maximized: true };
    expect(restoreBounds(saved, [LAPTOP])).toEqual({
      bounds: { x: 320, y: 110, ...DEFAULT_SIZE },
      maximized: true,
    });
  });

  it('needs the title bar on screen, not just a corner of the window', () => {
    const barely = { bounds: { x: 1900, y: 500, width: 1000, height: 800 }, maximized: false };
    expect(restoreBounds(barely, [LAPTOP]).bounds.x).toBe(320);
    const titleAbove = { bounds: { x: 100, y: -700, width: 1000, height: 800 }, maximized: false };
    expect(restoreBounds(titleAbove, [LAPTOP]).bounds.y).toBe(110);
  });

  it('keeps the size between the minimum and the display', () => {
    const tiny = restoreBounds({ bounds: { x: 10, y: 10, width: 100, height: 50 }, maximized: false }, [
      LAPTOP,
    ]);
    expect(tiny.bounds).toMatchObject({ width: MIN_SIZE.width, height: MIN_SIZE.height });
    const huge = restoreBounds({ bounds: { x: 0, y: 0, width: 9000, height: 9000 }, maximized: false }, [
      LAPTOP,
    ]);
    expect(huge.bounds).toMatchObject({ width: LAPTOP.width, height: LAPTOP.height });
  });

  it('fits the default size on a small display', () => {
    const small: Rect = { x: 0, y: 0, width: 1024, height: 600 };
    expect(restoreBounds(undefined, [small]).bounds).toEqual({ x: 0, y: 0, width: 1024, height: 600 });
  });
});

describe('window state file', () => {
  it('round-trips through the file and ignores damaged content', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stellwerk-window-'));
    try {
      const file = path.join(dir, 'sub', 'window-state.json');
      expect(readWindowState(file)).toBeUndefined();
      const state = { bounds: { x: -1200, y: 40, width: 1100, height: 700 }, maximized: false };
      writeWindowState(file, state);
      expect(readWindowState(file)).toEqual(state);
      expect(fs.readdirSync(path.dirname(file))).toEqual(['window-state.json']);
      fs.writeFileSync(file, '{"bounds":');
      expect(readWindowState(file)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    null,
    3,
    {},
    { bounds: { x: 0, y: 0, width: 0, height: 10 } },
    { bounds: { x: '0', y: 0, width: 5, height: 5 } },
  ])('rejects %j', (value) => expect(parseWindowState(value)).toBeUndefined());
});
