import { RecordCodec } from '../../src/channels/record-codec.js';

const N = 256;
const batches = Array.from({ length: 64 }, (_, b) =>
  Array.from({ length: N }, (_, i) => ({ key: `k${(b * N + i) % 10000}`, value: (b * N + i) * 2 })),
);
const enc = new RecordCodec();
let k = 0,
  s = 0;
for (let i = 0; i < 2000; i++) s += enc.encodeBatch(batches[k++ & 63]).length;
const iters = 20000;
const t = performance.now();
for (let i = 0; i < iters; i++) s += enc.encodeBatch(batches[k++ & 63]).length;
console.log('encode', (((performance.now() - t) * 1e6) / (iters * N)).toFixed(1), 'ns/rec', s);
