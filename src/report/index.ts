// The HTML report writer: re-exports only.

export { SERIES_COLORS, seriesColor } from './chart-palette.js';
export { linearScale, niceStep, niceTicks, type Tick } from './chart-scale.js';
export { escapeHtml } from './escape-html.js';
export { type HtmlReport, type ReportBlock, type ReportTable, renderHtmlReport } from './html-report.js';
export { type HistogramSeries, type HistogramSpec, renderHistogram } from './svg-histogram.js';
export { type ChartMarker, type LineChartSpec, type LineSeries, renderLineChart } from './svg-line-chart.js';
export { formatTextTable } from './text-table.js';
