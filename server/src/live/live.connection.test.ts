import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { WebSocket } from 'ws';
import type { LiveGrant } from './live.grant.js';
import { LiveConnection } from './live.connection.js';

/** A socket whose send buffer the test fills and drains; LiveConnection only uses these members. */
class SlowSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  send(message: string) {
    this.sent.push(message);
  }
  ping() {}
}

const grant = { states: null } as unknown as LiveGrant;

describe('LiveConnection', () => {
  it('sends at once while the socket keeps up', () => {
    const socket = new SlowSocket();
    const c = new LiveConnection(socket as unknown as WebSocket, grant, {
      maxQueued: 3,
      onDrop: () => {},
    });
    c.send('a');
    c.send('b');
    expect(socket.sent).toEqual(['a', 'b']);
  });

  it('queues behind a full socket, drops the oldest beyond the bound, and reports the drops once drained', () => {
    vi.useFakeTimers();
    try {
      const socket = new SlowSocket();
      const drops: number[] = [];
      const c = new LiveConnection(socket as unknown as WebSocket, grant, {
        maxQueued: 3,
        onDrop: (n) => drops.push(n),
      });
      socket.bufferedAmount = 10 * 1024 * 1024;
      for (const m of ['1', '2', '3', '4', '5']) c.send(m);
      expect(socket.sent).toEqual([]);
      expect(c.droppedTotal).toBe(2);
      expect(drops).toEqual([1, 1]);
      socket.bufferedAmount = 0;
      vi.advanceTimersByTime(50);
      expect(socket.sent).toEqual(['3', '4', '5', JSON.stringify({ type: 'dropped', count: 2 })]);
      c.send('6');
      expect(socket.sent.at(-1)).toBe('6');
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a peer that never answered the previous ping', () => {
    const socket = new SlowSocket();
    const c = new LiveConnection(socket as unknown as WebSocket, grant, {
      maxQueued: 3,
      onDrop: () => {},
    });
    expect(c.heartbeat()).toBe(true);
    expect(c.heartbeat()).toBe(false);
    socket.emit('pong');
    expect(c.heartbeat()).toBe(true);
  });
});
