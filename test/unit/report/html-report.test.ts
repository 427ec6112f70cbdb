/** The HTML report is self-contained (no scripts, no external references) and escapes all text. */

import { describe, expect, it } from 'vitest';
import { type ReportBlock, renderHtmlReport } from '../../../src/report/index.js';

const blocks: ReportBlock[] = [
  { kind: 'heading', text: 'Results <1>' },
  { kind: 'paragraph', text: 'a & b "quoted"' },
  { kind: 'list', items: ['one', '<two>'] },
  { kind: 'table', table: { caption: 'cap', head: ['', 'x'], rows: [['row <a>', '1 & 2']] } },
  {
    kind: 'line-chart',
    chart: {
      title: 'line',
      xLabel: 's',
      yLabel: 'r/s',
      series: [
        {
          name: 'eo',
          points: [
            [0, 1],
            [1, 3],
            [2, Number.NaN],
            [3, 2],
          ],
        },
      ],
      markers: [{ x: 1.5, kind: 'crash', label: 'crash <here>', color: '#c00' }],
    },
  },
  {
    kind: 'histogram',
    chart: {
      title: 'h',
      xLabel: 'ms',
      yLabel: '%',
      bins: ['0', '1'],
      series: [{ name: 'eo', values: [3, 4] }],
    },
  },
];

describe('renderHtmlReport', () => {
  const html = renderHtmlReport({ title: 'T <&>', blocks });

  it('renders every block kind', () => {
    expect(html).toContain('<h2>Results &lt;1&gt;</h2>');
    expect(html).toContain('<p>a &amp; b &quot;quoted&quot;</p>');
    expect(html).toContain('<li>&lt;two&gt;</li>');
    expect(html).toContain('<caption>cap</caption>');
    expect(html).toContain('<th>row &lt;a&gt;</th><td>1 &amp; 2</td>');
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('<title>crash &lt;here&gt;</title>');
  });

  it('is self-contained: no scripts, no external assets', () => {
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);
    // the only URL is the SVG namespace
    const urls = html.match(/https?:\/\/[^\s"']+/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(['http://www.w3.org/2000/svg']));
  });

  it('never lets user text open a tag', () => {
    const evil = renderHtmlReport({
      title: '</title><script>x</script>',
      blocks: [{ kind: 'paragraph', text: '<script>' }],
    });
    expect(evil).not.toContain('<script>');
  });

  it('breaks a line series at non-finite points instead of drawing through them', () => {
    const path = html.match(/<path d="([^"]+)"/)?.[1] ?? '';
    expect(path.match(/M/g)).toHaveLength(2);
  });

  it('rejects an unknown block kind', () => {
    expect(() =>
      renderHtmlReport({ title: 't', blocks: [{ kind: 'video' } as unknown as ReportBlock] }),
    ).toThrow(/unknown report block/);
  });
});
