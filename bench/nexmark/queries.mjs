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

/** q11, user sessions: bids per bidder and session (a gap of `windowMs` without bids ends one). */
function q11(input, { windowMs }) {
  return bids(input)
    .keyBy((b) => b.bidder)
    .window(windows.session({ gap: windowMs }))
    .aggregate({
      createAccumulator: () => ({ bidder: 0, count: 0, first: Infinity, last: -Infinity }),
      add(b, acc) {
        acc.bidder = b.bidder;
        acc.count++;
        if (b.dateTime < acc.first) acc.first = b.dateTime;
        if (b.dateTime > acc.last) acc.last = b.dateTime;
        return acc;
      },
      merge: (a, b) => ({
        bidder: a.bidder,
        count: a.count + b.count,
        first: Math.min(a.first, b.first),
        last: Math.max(a.last, b.last),
      }),
      // Flink's SESSION_START / SESSION_END: the first bid, the last bid plus the gap
      getResult: (acc) => ({
        bidder: acc.bidder,
        bidCount: acc.count,
        starttime: acc.first,
        endtime: acc.last + windowMs,
      }),
    })
    .name('q11 sessions per bidder');
}

/** `HOUR(dateTime)` (UTC) → Flink q14's bidTimeType. */
function bidTimeType(dateTime) {
  const hour = new Date(dateTime).getUTCHours();
  if (hour >= 8 && hour <= 18) return 'dayTime';
  if (hour <= 6 || hour >= 20) return 'nightTime';
  return 'otherTime';
}

function countChar(text, ch) {
  let n = 0;
  for (let i = text.indexOf(ch); i >= 0; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

/** q14, calculation: converted prices in (1 M, 50 M), the time of day, and a count of 'c's in extra. */
function q14(input) {
  return input
    .filter((e) => e.kind === 'bid' && 0.908 * e.price > 1_000_000 && 0.908 * e.price < 50_000_000)
    .name('q14 select')
    .map((b) => ({
      auction: b.auction,
      bidder: b.bidder,
      price: 0.908 * b.price,
      bidTimeType: bidTimeType(b.dateTime),
      dateTime: b.dateTime,
      extra: b.extra,
      cCounts: countChar(b.extra, 'c'),
    }))
    .name('q14 calculate');
}

const DAY_MS = 86_400_000;

/** q17, auction statistics: per auction and day, bid counts by price range, min/max/avg/sum of prices. */
function q17(input) {
  return bids(input)
    .keyBy((b) => b.auction)
    .window(windows.tumbling({ size: DAY_MS }))
    .aggregate({
      createAccumulator: () => ({
        auction: 0,
        day: 0,
        total: 0,
        rank1: 0,
        rank2: 0,
        rank3: 0,
        min: Infinity,
        max: -Infinity,
        sum: 0,
      }),
      add(b, acc) {
        acc.auction = b.auction;
        acc.day = b.dateTime - (b.dateTime % DAY_MS);
        acc.total++;
        if (b.price < 10_000) acc.rank1++;
        else if (b.price < 1_000_000) acc.rank2++;
        else acc.rank3++;
        if (b.price < acc.min) acc.min = b.price;
        if (b.price > acc.max) acc.max = b.price;
        acc.sum += b.price;
        return acc;
      },
      getResult: (acc) => ({
        auction: acc.auction,
        day: new Date(acc.day).toISOString().slice(0, 10),
        totalBids: acc.total,
        rank1Bids: acc.rank1,
        rank2Bids: acc.rank2,
        rank3Bids: acc.rank3,
        minPrice: acc.min,
        maxPrice: acc.max,
        avgPrice: Math.floor(acc.sum / acc.total),
        sumPrice: acc.sum,
      }),
    })
    .name('q17 statistics per auction and day');
}

/**
 * q20, expanded bids: bids joined with their auction, for auctions in category 10. Keyed by
 * auction id: the auction (or only its category, for other categories) stays in state as
 * Flink's regular join keeps it; bids that come before their auction wait for it.
 */
function q20(input) {
  const joined = (b, a) => ({
    auction: b.auction,
    bidder: b.bidder,
    price: b.price,
    channel: b.channel,
    url: b.url,
    bidDateTime: b.dateTime,
    bidExtra: b.extra,
    itemName: a.itemName,
    description: a.description,
    initialBid: a.initialBid,
    reserve: a.reserve,
    dateTime: a.dateTime,
    expires: a.expires,
    seller: a.seller,
    category: a.category,
    extra: a.extra,
  });
  return auctions(input)
    .keyBy((a) => a.id)
    .connect(bids(input).keyBy((b) => b.auction))
    .process({
      processElement1(a, ctx, out) {
        const kept = a.category === 10 ? a : { category: a.category };
        ctx.state.value('auction').update(kept);
        const waiting = ctx.state.list('bids');
        if (a.category === 10) for (const b of waiting.get()) out.collect(joined(b, a));
        waiting.clear();
      },
      processElement2(b, ctx, out) {
        const a = ctx.state.value('auction').value();
        if (a === undefined) ctx.state.list('bids').add(b);
        else if (a.category === 10) out.collect(joined(b, a));
      },
    })
    .name('q20 join');
}

const CHANNEL_ID = /(&|^)channel_id=([^&]*)/;
const HOT_CHANNEL_IDS = { apple: '0', google: '1', facebook: '2', baidu: '3' };

/** `REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)` over the query string, or null. */
function channelIdOf(url) {
  const query = url.indexOf('?');
  const m = CHANNEL_ID.exec(query < 0 ? url : url.slice(query + 1));
  return m === null ? null : m[2];
}

/** q21, add channel id: the hot channels' fixed ids, else the url's channel_id; bids with neither dropped. */
function q21(input) {
  return bids(input)
    .process((b, _ctx, out) => {
      const hot = HOT_CHANNEL_IDS[b.channel.toLowerCase()];
      const channelId = hot ?? channelIdOf(b.url);
      if (channelId === null) return;
      out.collect({ auction: b.auction, bidder: b.bidder, price: b.price, channel: b.channel, channelId });
    })
    .name('q21 channel id');
}

/** q22, get URL directories: `SPLIT_INDEX(url, '/', 3 | 4 | 5)` (null past the end). */
function q22(input) {
  return bids(input)
    .map((b) => {
      const parts = b.url.split('/');
      return {
        auction: b.auction,
        bidder: b.bidder,
        price: b.price,
        channel: b.channel,
        dir1: parts[3] ?? null,
        dir2: parts[4] ?? null,
        dir3: parts[5] ?? null,
      };
    })
    .name('q22 split url');
}

export const QUERIES = { q0, q1, q2, q3, q4, q5, q7, q8, q9, q11, q14, q17, q20, q21, q22 };
export const QUERY_NAMES = Object.keys(QUERIES);

/** The stream of query `name`; throws a RangeError naming the known ones. */
export function buildQuery(name, input, options) {
  const q = QUERIES[name];
  if (q === undefined)
    throw new RangeError(`unknown Nexmark query '${name}'; the queries are ${QUERY_NAMES.join(', ')}`);
  return q(input, options);
}
