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

export const REFERENCES = { q0, q1, q2, q3, q4, q5, q7, q8, q9: winningBids };
