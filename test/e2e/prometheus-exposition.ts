/** Strict parsing of Prometheus exposition text for the dashboard and `weir/prometheus` tests. */

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses exposition text strictly: every line is a comment or `name{labels} value`. */
export function parseExposition(text: string): { samples: PromSample[]; types: Map<string, string> } {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|NaN|\+Inf)$/.exec(line);
    if (!m) throw new Error(`not exposition format: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { samples, types };
}

export const key = (s: PromSample) =>
  `${s.name}{${Object.entries(s.labels)
    .sort()
    .map(([k, v]) => `${k}=${v}`)
    .join(',')}}`;
