// A service reading orders from a NATS JetStream stream and keeping per-customer totals in
// PostgreSQL, exactly-once (README "Connectors"):
//
//   nats stream add ORDERS --subjects 'orders.>'        # or jsm.streams.add(...)
//   psql test -c 'CREATE TABLE customer_totals (customer text PRIMARY KEY, orders int, amount numeric)'
//   weir run examples/jetstream-to-postgres.mjs --parallelism 2 --checkpoint-interval 1000 \
//     --checkpoint-dir ./ckpt --arg stream=ORDERS --arg subjects=orders.0,orders.1
//
// Orders are JSON { customer, amount } published on orders.<partition>. Each filter subject is
// one split; the checkpoint holds each split's stream sequence and each customer's totals; the
// sink upserts each checkpoint's changed totals in one transaction with its commit marker. Kill
// it any time and rerun with `--restore latest`: the table ends exactly as if nothing happened.
import { defineJob, sinks, sources } from 'weir';

export default defineJob((env, args) => {
  env
    .fromSource(
      sources.jetstream({
        servers: args.servers ?? 'nats://127.0.0.1:4222',
        stream: args.stream ?? 'ORDERS',
        filterSubjects: (args.subjects ?? 'orders.>').split(','),
        bounded: args.bounded === 'true',
      }),
      'orders',
    )
    .keyBy((o) => o.customer)
    .process((o, ctx, out) => {
      const orders = ctx.state.value('orders');
      const amount = ctx.state.value('amount');
      orders.update((orders.value() ?? 0) + 1);
      amount.update((amount.value() ?? 0) + o.amount);
      out.collect({ customer: ctx.key, orders: orders.value(), amount: amount.value() });
    })
    .name('totals per customer')
    .sinkTo(
      sinks.postgres({
        connection: args.connection ?? 'postgres://root@127.0.0.1:5432/test',
        table: args.table ?? 'customer_totals',
        upsertKey: ['customer'],
      }),
    );
});
