// Single-thread reference implementations of the queries in queries.mjs: the same semantics
// computed directly over the whole event array (in event-number order), with no state backend,
// watermarks or parallelism. test/e2e/nexmark.test.ts compares weir's output with these as
// multisets (parallel output has no defined order).

const windowStart = (t, size) => t - (t % size);

function q0(events) {
  return events
    .filter((e) => e.kind === 'bid')
    .map((b) => ({
      auction: b.auction,
      bidder: b.bidder,
      price: b.price,
      dateTime: b.dateTime,
      extra: b.extra,
    }));
}

function q1(events) {
  return events
    .filter((e) => e.kind === 'bid')
    .map((b) => ({
      auction: b.auction,
      bidder: b.bidder,
      price: 0.908 * b.price,
      dateTime: b.dateTime,
      extra: b.extra,
    }));
}

function q2(events) {
  return events
    .filter((e) => e.kind === 'bid' && e.auction % 123 === 0)
    .map((b) => ({ auction: b.auction, price: b.price }));
}

function q3(events) {
  const people = new Map();
  for (const e of events)
    if (e.kind === 'person' && ['OR', 'ID', 'CA'].includes(e.state)) people.set(e.id, e);
  const out = [];
  for (const a of events) {
    if (a.kind !== 'auction' || a.category !== 10) continue;
    const p = people.get(a.seller);
    if (p) out.push({ name: p.name, city: p.city, state: p.state, id: a.id });
  }
  return out;
}

function winningBids(events) {
  const bidsByAuction = new Map();
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const list = bidsByAuction.get(b.auction) ?? [];
    list.push(b);
    bidsByAuction.set(b.auction, list);
  }
  const out = [];
  for (const a of events) {
    if (a.kind !== 'auction') continue;
    let best;
    for (const b of bidsByAuction.get(a.id) ?? []) {
      if (b.dateTime < a.dateTime || b.dateTime > a.expires || b.price < a.reserve) continue;
      if (
        !best ||
        (b.price !== best.price
          ? b.price > best.price
          : b.dateTime !== best.dateTime
            ? b.dateTime < best.dateTime
            : b.bidder < best.bidder)
      )
        best = b;
    }
    if (best) {
      out.push({
        auction: a.id,
        category: a.category,
        seller: a.seller,
        price: best.price,
        bidder: best.bidder,
        bidTime: best.dateTime,
        expires: a.expires,
      });
    }
  }
  return out;
}

function q4(events, { windowMs }) {
  const groups = new Map();
  for (const w of winningBids(events)) {
    const k = `${w.category}/${windowStart(w.expires, windowMs)}`;
    const g = groups.get(k) ?? { category: w.category, sum: 0, count: 0 };
    g.sum += w.price;
    g.count++;
    groups.set(k, g);
  }
  return [...groups.values()].map((g) => ({ category: g.category, avg: g.sum / g.count, count: g.count }));
}

/** Per window end: the rows with the highest score. */
function maxPerWindow(rowsByWindow, score) {
  const out = [];
  for (const [end, rows] of rowsByWindow) {
    const max = Math.max(...rows.map(score));
    for (const r of rows) if (score(r) === max) out.push({ ...r, windowEnd: end });
  }
  return out;
}

function q5(events, { windowMs, slideMs }) {
  const counts = new Map(); // windowEnd → Map(auction → count)
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    for (let start = windowStart(b.dateTime, slideMs); start > b.dateTime - windowMs; start -= slideMs) {
      const end = start + windowMs;
      const m = counts.get(end) ?? new Map();
      m.set(b.auction, (m.get(b.auction) ?? 0) + 1);
      counts.set(end, m);
    }
  }
  const rows = new Map();
  for (const [end, m] of counts)
    rows.set(
      end,
      [...m].map(([auction, count]) => ({ auction, count })),
    );
  return maxPerWindow(rows, (r) => r.count);
}

function q7(events, { windowMs }) {
  const rows = new Map();
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const end = windowStart(b.dateTime, windowMs) + windowMs;
    const list = rows.get(end) ?? [];
    list.push({ auction: b.auction, price: b.price, bidder: b.bidder, dateTime: b.dateTime, extra: b.extra });
    rows.set(end, list);
  }
  return maxPerWindow(rows, (r) => r.price);
}

function q8(events, { windowMs }) {
  const people = new Map(); // `${id}/${start}` → name
  const sellers = new Set();
  for (const e of events) {
    if (e.kind === 'person') people.set(`${e.id}/${windowStart(e.dateTime, windowMs)}`, e.name);
    else if (e.kind === 'auction') sellers.add(`${e.seller}/${windowStart(e.dateTime, windowMs)}`);
  }
  const out = [];
  for (const [k, name] of people) {
    if (!sellers.has(k)) continue;
    const [id, start] = k.split('/').map(Number);
    out.push({ id, name, starttime: start });
  }
  return out;
}

function q11(events, { windowMs }) {
  const byBidder = new Map();
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const list = byBidder.get(b.bidder) ?? [];
    list.push(b.dateTime);
    byBidder.set(b.bidder, list);
  }
  const out = [];
  for (const [bidder, times] of byBidder) {
    times.sort((x, y) => x - y);
    let cur;
    for (const t of times) {
      // session windows [t, t + gap) merge when they touch (Flink's TimeWindow.intersects)
      if (cur && t <= cur.last + windowMs) {
        cur.count++;
        cur.last = t;
      } else {
        if (cur) out.push(cur);
        cur = { bidder, first: t, last: t, count: 1 };
      }
    }
    out.push(cur);
  }
  return out.map((s) => ({
    bidder: s.bidder,
    bidCount: s.count,
    starttime: s.first,
    endtime: s.last + windowMs,
  }));
}

function q14(events) {
  const out = [];
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const price = 0.908 * b.price;
    if (!(price > 1_000_000 && price < 50_000_000)) continue;
    const hour = new Date(b.dateTime).getUTCHours();
    const bidTimeType =
      hour >= 8 && hour <= 18 ? 'dayTime' : hour <= 6 || hour >= 20 ? 'nightTime' : 'otherTime';
    out.push({
      auction: b.auction,
      bidder: b.bidder,
      price,
      bidTimeType,
      dateTime: b.dateTime,
      extra: b.extra,
      cCounts: b.extra.split('c').length - 1,
    });
  }
  return out;
}

function q17(events) {
  const groups = new Map();
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const day = new Date(b.dateTime).toISOString().slice(0, 10);
    const k = `${b.auction}/${day}`;
    const g = groups.get(k) ?? { auction: b.auction, day, prices: [] };
    g.prices.push(b.price);
    groups.set(k, g);
  }
  return [...groups.values()].map((g) => {
    const sum = g.prices.reduce((x, y) => x + y, 0);
    return {
      auction: g.auction,
      day: g.day,
      totalBids: g.prices.length,
      rank1Bids: g.prices.filter((p) => p < 10_000).length,
      rank2Bids: g.prices.filter((p) => p >= 10_000 && p < 1_000_000).length,
      rank3Bids: g.prices.filter((p) => p >= 1_000_000).length,
      minPrice: Math.min(...g.prices),
      maxPrice: Math.max(...g.prices),
      avgPrice: Math.floor(sum / g.prices.length),
      sumPrice: sum,
    };
  });
}

function q20(events) {
  const byId = new Map();
  for (const a of events) if (a.kind === 'auction' && a.category === 10) byId.set(a.id, a);
  const out = [];
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const a = byId.get(b.auction);
    if (!a) continue;
    out.push({
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
  }
  return out;
}

function q21(events) {
  const hot = { apple: '0', google: '1', facebook: '2', baidu: '3' };
  const out = [];
  for (const b of events) {
    if (b.kind !== 'bid') continue;
    const params = new URL(b.url).searchParams;
    const channelId = hot[b.channel.toLowerCase()] ?? params.get('channel_id');
    if (channelId === null) continue;
    out.push({ auction: b.auction, bidder: b.bidder, price: b.price, channel: b.channel, channelId });
  }
  return out;
}

function q22(events) {
  return events
    .filter((e) => e.kind === 'bid')
    .map((b) => {
      const [dir1 = null, dir2 = null, dir3 = null] = new URL(b.url).pathname.split('/').slice(1);
      return { auction: b.auction, bidder: b.bidder, price: b.price, channel: b.channel, dir1, dir2, dir3 };
    });
}

export const REFERENCES = { q0, q1, q2, q3, q4, q5, q7, q8, q9: winningBids, q11, q14, q17, q20, q21, q22 };
