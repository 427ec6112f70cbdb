import { describe, expect, it } from 'vitest';
import type { CombinedResults } from '../../../bench/harness/combined-results.js';
import { chartSvg, escapeHtml, renderHtml, tableHtml } from '../../../bench/harness/html.js';
import { machineInfo } from '../../../bench/harness/machine-info.js';

const results: CombinedResults = {
  benchmark: 'weir bench',
  command: 'weir bench --quick',
  quick: true,
  machine: machineInfo(),
  suites: [
    {
      name: 'pipeline',
      command: 'node --import tsx bench/pipeline/run.ts --quick',
      status: 'ok',
      exitCode: 0,
      durationMs: 1234,
      result: {
        report: {
          suite: 'pipeline',
          title: 'pipeline <throughput>',
          command: 'node …',
          machine: 'm',
          notes: ['a & b'],
          tables: [{ title: 't', rows: [{ case: 'weir p=1', 'records/s': '1.2 M' }] }],
          charts: [
            {
              title: 'ratio',
              unit: '×',
              bars: [
                { label: 'a', value: 2 },
                { label: 'b', value: 0.5 },
                { label: 'skipped', value: Number.NaN },
              ],
              reference: { value: 1, label: 'baseline' },
            },
          ],
        },
      },
    },
    {
      name: 'latency',
      command: 'node …',
      status: 'failed',
      exitCode: 3,
      durationMs: 10,
      error: 'exit code 3',
    },
  ],
};

describe('bench HTML report', () => {
  it('escapes text', () => {
    expect(escapeHtml(`<a href="x">&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;');
  });

  it('renders tables with numeric columns right-aligned', () => {
    const html = tableHtml({
      title: 'x',
      rows: [
        { name: 'a', rate: '1.5 M' },
        { name: 'b', rate: 3 },
      ],
    });
    expect(html).toContain('<th>name</th><th class="num">rate</th>');
    expect(html).toContain('<td>b</td><td class="num">3</td>');
  });

  it('draws bars to scale against the largest value and leaves out non-finite ones', () => {
    const svg = chartSvg(results.suites[0].result!.report!.charts[0]);
    const widths = [...svg.matchAll(/class="bar"/g)].length;
    expect(widths).toBe(2);
    expect(svg).toContain('width="420.0"'); // value 2 = the largest: full width
    expect(svg).toContain('width="105.0"'); // 0.5 / 2 of 420
    expect(svg).toContain('x1="490.0"'); // reference 1 at half width (280 + 210)
    expect(svg).not.toContain('skipped');
  });

  it('is one self-contained page: no scripts, no external assets, failed suites shown', () => {
    const html = renderHtml(results);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/i);
    expect(html.match(/https?:\/\/[^"]*/g)).toEqual(['http://www.w3.org/2000/svg']);
    expect(html).toContain('pipeline &lt;throughput&gt;');
    expect(html).toContain('a &amp; b');
    expect(html).toContain('failed (exit code 3): exit code 3');
    expect(html).toContain('not for quoting');
  });
});
