import type { Metrics } from '../../platform/metrics.js';

/** The packet spool's metrics (docs/operations.md); the gauges read the spool when scraped. */
export function spoolMetrics(
  metrics: Metrics,
  read: { outstanding: () => number; durableBytes: () => number },
) {
  metrics.gauge(
    'stellwerk_packet_spool_outstanding',
    'Packets accepted by the spool and not yet committed downstream',
    [],
    (gauge) => gauge.set(read.outstanding()),
  );
  metrics.gauge(
    'stellwerk_packet_spool_bytes',
    'Durable bytes held in packet spool segment files not yet deleted',
    [],
    (gauge) => gauge.set(read.durableBytes()),
  );
  return {
    groupSize: metrics.histogram(
      'stellwerk_packet_spool_group_size',
      'Packets written per spool group (one fdatasync each)',
      [1, 10, 50, 100, 500, 1000, 5000],
    ),
    spooled: metrics.counter('stellwerk_packets_spooled_total', 'Packets durable in the packet spool'),
    refused: metrics.counter('stellwerk_packet_spool_refused_total', 'Packets refused by the packet spool', [
      'reason',
    ]),
  };
}
