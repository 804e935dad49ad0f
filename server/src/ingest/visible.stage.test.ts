import pg from 'pg';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../platform/metrics.js';
import type { IncomingPacket } from './ingest.types.js';
import { DeviceResolver } from './resolve-device.stage.js';
import { VisibleStage, type OverloadReason } from './visible.stage.js';

// The declining paths never reach the resolver: its pool is created but never connects.
function stage(overloaded: () => OverloadReason | null, maxPending = 2) {
  const metrics = new Metrics({}, { processMetrics: false });
  const visible = new VisibleStage({
    resolver: new DeviceResolver(new pg.Pool({ connectionString: 'postgres://127.0.0.1:1/none' })),
    parsing: { parse: () => Promise.reject(new Error('not used')) },
    wanted: () => true,
    publish: () => undefined,
    overloaded,
    metrics,
    log: pino({ enabled: false }),
    maxPending,
  });
  return { visible, metrics };
}

const packet = (deviceKey: string): IncomingPacket => ({
  connectorId: '0b6f6c1e-3f2a-4c1d-9a57-5c3f0e2b7d11',
  deviceKey,
  payload: Buffer.from('{}'),
  source: 'test',
  receivedAt: new Date(),
});

describe('visible stage', () => {
  it('declines arriving packets while the server is overloaded and counts them', async () => {
    let overloaded: OverloadReason | null = 'event-loop';
    const { visible, metrics } = stage(() => overloaded);
    expect(visible.take(packet('a'))).toBe(false);
    expect(visible.take(packet('b'))).toBe(false);
    overloaded = 'backlog';
    expect(visible.take(packet('c'))).toBe(false);
    overloaded = null;
    expect(visible.take(packet('d'))).toBe(true);
    expect(await metrics.registry.getSingleMetricAsString('stellwerk_live_shed_total')).toMatch(
      /stellwerk_live_shed_total\{reason="event-loop"\} 2$/m,
    );
    expect(await metrics.registry.getSingleMetricAsString('stellwerk_live_shed_total')).toMatch(
      /stellwerk_live_shed_total\{reason="backlog"\} 1$/m,
    );
  });

  it('declines beyond maxPending packets waiting to be shown', async () => {
    const { visible, metrics } = stage(() => null, 2);
    expect([packet('a'), packet('b'), packet('c')].map((p) => visible.take(p))).toEqual([true, true, false]);
    expect(await metrics.registry.getSingleMetricAsString('stellwerk_live_shed_total')).toMatch(
      /stellwerk_live_shed_total\{reason="pending"\} 1$/m,
    );
  });
});
