// Run: npm run build && node bench/operators/thenable-check.mjs
// Cost of the thenable check on MapOperator.processElement: the operator as built (with
// synchronousResult) against the same class body without the check. Same process, alternating rounds.
import { MapOperator } from '../../dist/worker/operators/one-input-operators.js';
import { AbstractStreamOperator, userCodeError } from '../../dist/worker/operators/stream-operator.js';

class UncheckedMap extends AbstractStreamOperator {
  constructor(nodeId, name, uid, ctx, out, fn) {
    super(nodeId, name, uid, ctx, out);
    this.fn = fn;
  }
  processElement(value) {
    this.recordsIn++;
    let result;
    try {
      result = this.fn(value, this.ctx);
    } catch (e) {
      throw userCodeError(this.name, e);
    }
    this.out.collect(result);
  }
}
let sink = 0;
const out = {
  collect: (v) => {
    sink += v.x;
  },
};
const ctx = { subtaskIndex: 0, parallelism: 1, attempt: 0, operatorName: 'm' };
const fn = (i) => ({ x: i, y: 'a' });
const checked = new MapOperator(0, 'm', 'm', ctx, out, fn);
const unchecked = new UncheckedMap(0, 'm', 'm', ctx, out, fn);
const N = 20_000_000;
function run(op) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) op.processElement(i);
  return Number(process.hrtime.bigint() - t) / N;
}
const r = { checked: [], unchecked: [] };
for (let round = 0; round < 6; round++) {
  r.unchecked.push(run(unchecked));
  r.checked.push(run(checked));
}
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(
  `ns/record median of 6 rounds: unchecked ${med(r.unchecked).toFixed(2)}, checked ${med(r.checked).toFixed(2)} (sink ${sink > 0})`,
);
const os = await import('node:os');
console.log(
  `node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown cpu'} x${os.cpus().length}, load ${os.loadavg()[0].toFixed(1)}`,
);
