import { describe, expect, it } from 'vitest';
import { Metrics, mergeFamilies, type MetricFamily } from './metrics.js';

describe('Metrics exposition', () => {
  it('writes a family held by the main registry and a worker registry once, summing equal series', async () => {
    const main = new Metrics({ node: 'n1' }, { processMetrics: false });
    const worker = new Metrics({ node: 'n1' }, { processMetrics: false });
    for (const metrics of [main, worker]) {
      const counter = metrics.counter('stellwerk_test_total', 'A test counter', ['kind']);
      counter.inc({ kind: 'a' }, 2);
      if (metrics === worker) counter.inc({ kind: 'b' });
    }
    worker.histogram('stellwerk_test_seconds', 'A test histogram', [0.1, 1]).observe(0.5);
    main.addSource(() => worker.families());

    const text = await main.exposition();
    expect(text.match(/^# HELP stellwerk_test_total /gm)).toHaveLength(1);
    expect(text.match(/^# TYPE stellwerk_test_total counter$/gm)).toHaveLength(1);
    expect(text).toContain('stellwerk_test_total{kind="a",node="n1"} 4');
    expect(text).toContain('stellwerk_test_total{kind="b",node="n1"} 1');
    expect(text).toContain('stellwerk_test_seconds_bucket{le="1",node="n1"} 1');
    expect(text).toContain('stellwerk_test_seconds_count{node="n1"} 1');
  });

  it('keeps series with different labels apart', () => {
    const family = (value: number, pool: string) =>
      ({
        name: 'stellwerk_pool',
        help: 'h',
        type: 'gauge',
        aggregator: 'sum',
        values: [{ labels: { pool }, value }],
      }) as unknown as MetricFamily;
    const [merged] = mergeFamilies([family(1, 'orm'), family(2, 'ingest'), family(3, 'orm')]);
    expect(merged!.values).toEqual([
      { labels: { pool: 'orm' }, value: 4 },
      { labels: { pool: 'ingest' }, value: 2 },
    ]);
  });
});
