// The Nexmark queries as weir DataStream jobs (no SQL), following the definitions of the
// nexmark-flink project (github.com/nexmark/nexmark, queries/*.sql) and, for q4/q9's winning
// bids, Beam's (a winning bid is the highest bid at or above the reserve placed while the auction
// was open). Plain JavaScript: worker threads load job modules without a TypeScript loader.
//
// Each query is `(input, options) => DataStream`, where `input` is the Nexmark event stream with
// event-time timestamps and watermarks already assigned, and `options = { windowMs, slideMs }`
// sets the window sizes (Flink's: 10 s windows, q5 sliding every 2 s). The single-thread
// reference of each, with the same semantics, is in reference.mjs; test/e2e/nexmark.test.ts checks
// that both agree, with and without a failure.
import { windows } from 'weir';

const bids = (input) => input.filter((e) => e.kind === 'bid').name('bids');
const auctions = (input) => input.filter((e) => e.kind === 'auction').name('auctions');
const persons = (input) => input.filter((e) => e.kind === 'person').name('persons');

/** q0, pass-through: every bid, as in Flink's `SELECT auction, bidder, price, dateTime, extra FROM bid`. */
function q0(input) {
  return bids(input)
    .map((b) => ({
      auction: b.auction,
      bidder: b.bidder,
      price: b.price,
      dateTime: b.dateTime,
      extra: b.extra,
    }))
    .name('q0 project');
}

/** q1, currency conversion: prices from dollars to euros (× 0.908). */
function q1(input) {
  return bids(input)
    .map((b) => ({
      auction: b.auction,
      bidder: b.bidder,
      price: 0.908 * b.price,
      dateTime: b.dateTime,
      extra: b.extra,
    }))
    .name('q1 convert');
}

/** q2, selection: the bids on every 123rd auction. */
function q2(input) {
  return input
    .filter((e) => e.kind === 'bid' && e.auction % 123 === 0)
    .name('q2 select')
    .map((b) => ({ auction: b.auction, price: b.price }))
    .name('q2 project');
}

const Q3_STATES = new Set(['OR', 'ID', 'CA']);

/**
 * q3, local item suggestion: people in OR, ID or CA who sell in category 10, by an incremental
 * join on seller = person id. Keyed state: the person (once seen) and the auctions that arrived
 * before their seller (emitted when the person comes). Each match is emitted once.
 */
function q3(input) {
  const people = persons(input)
    .filter((p) => Q3_STATES.has(p.state))
    .name('q3 persons in OR/ID/CA');
  const sales = auctions(input)
    .filter((a) => a.category === 10)
    .name('q3 auctions in category 10');
  const result = (p, auctionId) => ({ name: p.name, city: p.city, state: p.state, id: auctionId });
  return people
    .keyBy((p) => p.id)
    .connect(sales.keyBy((a) => a.seller))
    .process({
      processElement1(p, ctx, out) {
        const person = { name: p.name, city: p.city, state: p.state };
        ctx.state.value('person').update(person);
        const waiting = ctx.state.list('auctions');
        for (const id of waiting.get()) out.collect(result(person, id));
        waiting.clear();
      },
      processElement2(a, ctx, out) {
        const person = ctx.state.value('person').value();
        if (person !== undefined) out.collect(result(person, a.id));
        else ctx.state.list('auctions').add(a.id);
      },
    })
    .name('q3 join');
}

/**
 * Winning bids (q9, and the input of q4): per auction, the highest bid with
 * `auction.dateTime <= bid.dateTime <= auction.expires` and `price >= reserve` (ties: the
 * earliest, then the lowest bidder), emitted when the watermark passes `expires` (the record's timestamp is `expires`).
 * Keyed by auction id; bids that arrive before their auction wait in state until the auction
 * comes or the watermark passes their own time (then no auction can still make them valid).
 */
function winningBids(input) {
  // highest price; ties: the earliest, then the lowest bidder id (an order independent of arrival)
  const beats = (b, cur) =>
    b.price !== cur.price
      ? b.price > cur.price
      : b.dateTime !== cur.dateTime
        ? b.dateTime < cur.dateTime
        : b.bidder < cur.bidder;
  const consider = (ctx, a, b) => {
    if (b.dateTime < a.dateTime || b.dateTime > a.expires || b.price < a.reserve) return;
    const best = ctx.state.value('best');
    const cur = best.value();
    if (cur === undefined || beats(b, cur)) {
      best.update({ price: b.price, bidder: b.bidder, dateTime: b.dateTime });
    }
  };
  return auctions(input)
    .keyBy((a) => a.id)
    .connect(bids(input).keyBy((b) => b.auction))
    .process({
      processElement1(a, ctx) {
        const auction = {
          id: a.id,
          seller: a.seller,
          category: a.category,
          reserve: a.reserve,
          dateTime: a.dateTime,
          expires: a.expires,
        };
        ctx.state.value('auction').update(auction);
        const early = ctx.state.list('early');
        for (const b of early.get()) consider(ctx, auction, b);
        early.clear();
        ctx.timers.registerEventTime(a.expires);
      },
      processElement2(b, ctx) {
        const auction = ctx.state.value('auction').value();
        const bid = { price: b.price, bidder: b.bidder, dateTime: b.dateTime };
        if (auction !== undefined) {
          consider(ctx, auction, bid);
        } else {
          ctx.state.list('early').add(bid);
          ctx.timers.registerEventTime(b.dateTime);
        }
      },
      onTimer(ts, ctx, out) {
        const auction = ctx.state.value('auction').value();
        if (auction === undefined) {
          // No auction with dateTime <= ts can still come: bids up to ts can never count. Later
          // early bids stay (their own timers drop them).
          const early = ctx.state.list('early');
          early.update(early.get().filter((b) => b.dateTime > ts));
          return;
        }
        if (ts !== auction.expires) return;
        const best = ctx.state.value('best').value();
        if (best !== undefined) {
          out.collect({
            auction: auction.id,
            category: auction.category,
            seller: auction.seller,
            price: best.price,
            bidder: best.bidder,
            bidTime: best.dateTime,
            expires: auction.expires,
          });
        }
        ctx.state.value('auction').clear();
        ctx.state.value('best').clear();
      },
    })
    .name('winning bids');
}

/** q4, average price per category: of the winning bids of the auctions closed in each window. */
function q4(input, { windowMs }) {
  return winningBids(input)
    .keyBy((w) => w.category)
    .window(windows.tumbling({ size: windowMs }))
    .aggregate({
      createAccumulator: () => ({ category: 0, sum: 0, count: 0 }),
      add(w, acc) {
        acc.category = w.category;
        acc.sum += w.price;
        acc.count++;
        return acc;
      },
      getResult: (acc) => ({ category: acc.category, avg: acc.sum / acc.count, count: acc.count }),
    })
    .name('q4 average per category');
}

/**
 * Global "max per window" stage of q5 and q7. Its input is one partial result per window (and
 * upstream key) whose timestamp is the window's last ms (`end - 1`): `{ score, rows }`. On one
 * key it keeps per window the best score and the rows that reach it, and emits those rows (with
 * `windowEnd`) once the watermark passes the window: every partial result of that window has
 * arrived by then.
 */
function maxPerWindow(stream, name) {
  return stream
    .keyBy(() => 0)
    .process({
      processElement(p, ctx) {
        const byWindow = ctx.state.map('best');
        const end = ctx.timestamp + 1;
        const cur = byWindow.get(end);
        if (cur === undefined || p.score > cur.score)
          byWindow.put(end, { score: p.score, rows: [...p.rows] });
        else if (p.score === cur.score) {
          cur.rows.push(...p.rows);
          byWindow.put(end, cur);
        }
        ctx.timers.registerEventTime(end - 1);
      },
      onTimer(ts, ctx, out) {
        const byWindow = ctx.state.map('best');
        const cur = byWindow.get(ts + 1);
        if (cur === undefined) return;
        for (const r of cur.rows) out.collect({ ...r, windowEnd: ts + 1 });
        byWindow.remove(ts + 1);
      },
    })
    .name(name);
}

/** q5, hot items: per sliding window, the auctions with the most bids. */
function q5(input, { windowMs, slideMs }) {
  const counts = bids(input)
    .keyBy((b) => b.auction)
    .window(windows.sliding({ size: windowMs, slide: slideMs }))
    .aggregate({
      createAccumulator: () => ({ auction: 0, count: 0 }),
      add(b, acc) {
        acc.auction = b.auction;
        acc.count++;
        return acc;
      },
      getResult: (acc) => ({ score: acc.count, rows: [{ auction: acc.auction, count: acc.count }] }),
    })
    .name('q5 bids per auction and window');
  return maxPerWindow(counts, 'q5 max per window');
}

/** q7, highest bid: per tumbling window, the bids with the highest price. */
function q7(input, { windowMs }) {
  const partial = bids(input)
    .keyBy((b) => b.auction % 128)
    .window(windows.tumbling({ size: windowMs }))
    .aggregate({
      createAccumulator: () => ({ score: -1, rows: [] }),
      add(b, acc) {
        const row = {
          auction: b.auction,
          price: b.price,
          bidder: b.bidder,
          dateTime: b.dateTime,
          extra: b.extra,
        };
        if (b.price > acc.score) {
          acc.score = b.price;
          acc.rows = [row];
        } else if (b.price === acc.score) acc.rows.push(row);
        return acc;
      },
      getResult: (acc) => acc,
    })
    .name('q7 max per key and window');
  return maxPerWindow(partial, 'q7 max per window');
}

/**
 * q8, monitor new users: people who opened an auction in the tumbling window in which they
 * registered; one `{ id, name, starttime }` per person and window. Keyed by person id / seller,
 * per window start: the person (if seen) and whether an auction was; state is dropped when the
 * watermark passes the window.
 */
function q8(input, { windowMs }) {
  const start = (t) => t - (t % windowMs);
  const seen = (ctx, w, update, out) => {
    const byWindow = ctx.state.map('windows');
    const cur = byWindow.get(w) ?? { name: null, auction: false, emitted: false };
    update(cur);
    if (!cur.emitted && cur.name !== null && cur.auction) {
      cur.emitted = true;
      out.collect({ id: ctx.key, name: cur.name, starttime: w });
    }
    byWindow.put(w, cur);
    ctx.timers.registerEventTime(w + windowMs - 1);
  };
  return persons(input)
    .keyBy((p) => p.id)
    .connect(auctions(input).keyBy((a) => a.seller))
    .process({
      processElement1(p, ctx, out) {
        seen(ctx, start(p.dateTime), (c) => (c.name = p.name), out);
      },
      processElement2(a, ctx, out) {
        seen(ctx, start(a.dateTime), (c) => (c.auction = true), out);
      },
      onTimer(ts, ctx) {
        ctx.state.map('windows').remove(ts + 1 - windowMs);
      },
    })
    .name('q8 new users');
}

/** q9, winning bids: each closed auction with its winning bid. */
function q9(input) {
  return winningBids(input);
}

export const QUERIES = { q0, q1, q2, q3, q4, q5, q7, q8, q9 };
export const QUERY_NAMES = Object.keys(QUERIES);

/** The stream of query `name`; throws a RangeError naming the known ones. */
export function buildQuery(name, input, options) {
  const q = QUERIES[name];
  if (q === undefined)
    throw new RangeError(`unknown Nexmark query '${name}'; the queries are ${QUERY_NAMES.join(', ')}`);
  return q(input, options);
}
