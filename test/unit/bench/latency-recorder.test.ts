import { build, encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import { describe, expect, it } from 'vitest';
import { LatencyRecorder } from '../../../bench/harness/latency-recorder.js';

describe('LatencyRecorder encode/decode', () => {
  it('round-trips the distribution', () => {
    const r = new LatencyRecorder();
    for (let i = 1; i <= 1000; i++) r.record(i / 10); // 0.1 … 100 ms
    const back = LatencyRecorder.decode(r.encode());
    const [a, b] = [back.summary(), r.summary()];
    expect({ ...a, max: 0 }).toEqual({ ...b, max: 0 });
    // max comes back as its bucket's highest equivalent value: within the 3-digit precision
    expect(Math.abs(a.max - b.max) / b.max).toBeLessThan(1e-3);
    expect(back.summary().count).toBe(1000);
    expect(back.summary().p50).toBeCloseTo(50, 1);
  });

  it('decodes what a job module encodes with hdr-histogram-js directly, and merges', () => {
    const h = build({ bitBucketSize: 64, autoResize: true, useWebAssembly: false });
    for (let i = 0; i < 99; i++) h.recordValue(1000); // 1 ms in µs
    h.recordValue(250_000); // 250 ms
    const merged = LatencyRecorder.decode(encodeIntoCompressedBase64(h));
    merged.add(LatencyRecorder.decode(encodeIntoCompressedBase64(h)));
    const s = merged.summary();
    expect(s.count).toBe(200);
    expect(s.p50).toBeCloseTo(1, 2);
    expect(s.max).toBeCloseTo(250, 0);
  });
});
