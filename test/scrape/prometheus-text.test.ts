import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, samplesNamed, sumOfSeries } from '../../src/scrape/prometheus-text.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'prometheus');

describe('Prometheus text parser', () => {
  it("reads SGLang's /metrics: gauges with labels, counters, histograms", async () => {
    const parsed = parsePrometheusText(await readFile(join(FIXTURES, 'sglang-metrics.txt'), 'utf8'));
    expect(parsed.invalidLines).toBe(0);
    expect(parsed.types['sglang:num_running_reqs']).toBe('gauge');
    expect(parsed.types['sglang:time_to_first_token_seconds']).toBe('histogram');
    expect(parsed.help['sglang:num_queue_reqs']).toBe('The number of requests in the waiting queue.');
    const running = samplesNamed(parsed.samples, 'sglang:num_running_reqs');
    expect(running).toEqual([
      {
        name: 'sglang:num_running_reqs',
        labels: { engine_type: 'unified', model_name: 'meta-llama/Llama-3.1-8B-Instruct', pp_rank: '0', tp_rank: '0' },
        value: 12,
      },
    ]);
    expect(sumOfSeries(parsed.samples, 'sglang:cache_hit_rate')).toBe(0.4375);
    const buckets = samplesNamed(parsed.samples, 'sglang:time_to_first_token_seconds_bucket');
    expect(buckets).toHaveLength(5);
    expect(buckets.at(-1)?.labels.le).toBe('+Inf');
    expect(sumOfSeries(parsed.samples, 'sglang:time_to_first_token_seconds_count')).toBe(500);
    expect(sumOfSeries(parsed.samples, 'sglang:absent')).toBeUndefined();
  });

  it('handles escapes, special values, timestamps and counts invalid lines instead of failing', async () => {
    const parsed = parsePrometheusText(await readFile(join(FIXTURES, 'edge-cases.txt'), 'utf8'));
    expect(parsed.help.weird_metric).toBe('A help text with an escaped \\ backslash and a \n newline.');
    const [first, second] = samplesNamed(parsed.samples, 'weird_metric');
    expect(first?.labels).toEqual({ path: '/a,b', quote: 'say "hi"', newline: 'x\ny' });
    expect(first?.value).toBe(-0.0015);
    expect(second?.labels).toEqual({ empty: '' });
    expect(Number.isNaN(second?.value)).toBe(true);
    expect(sumOfSeries(parsed.samples, 'weird_metric_inf')).toBe(Number.POSITIVE_INFINITY);
    expect(sumOfSeries(parsed.samples, 'spaced_metric')).toBe(7);
    expect(parsed.invalidLines).toBe(2); // the sample without a value and "bad line here"
  });
});
