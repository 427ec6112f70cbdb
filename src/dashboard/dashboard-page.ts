/**
 * The dashboard page: one self-contained HTML document (inline CSS, JS and SVG, no external
 * assets, works offline). It subscribes to `/api/events` and re-renders from each snapshot; every
 * string from the job goes through `textContent`, never `innerHTML`.
 */

const STYLE = `
:root { color-scheme: light; font: 14px/1.4 system-ui, sans-serif; color: #1d2733; background: #f4f6f8; }
body { margin: 0; }
header { background: #1d2733; color: #fff; padding: 10px 20px; display: flex; gap: 24px; align-items: baseline; }
header h1 { font-size: 18px; margin: 0; }
.status { padding: 2px 8px; border-radius: 4px; font-weight: 600; background: #3b4b5e; }
.status.running { background: #2e7d32; } .status.restarting { background: #ef6c00; }
.status.failed { background: #c62828; } .status.finished, .status.stopped { background: #1565c0; }
main { padding: 12px 20px; display: grid; gap: 16px; }
section { background: #fff; border-radius: 6px; padding: 12px 16px; box-shadow: 0 1px 2px #0002; }
h2 { font-size: 15px; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: right; padding: 3px 8px; border-bottom: 1px solid #e3e7eb; }
th:first-child, td:first-child, td.name { text-align: left; }
th { background: #f0f3f6; font-weight: 600; }
pre { background: #fff4f4; border-left: 3px solid #c62828; padding: 8px; overflow-x: auto; font-size: 12px; margin: 4px 0 12px; }
.muted { color: #6b7785; }
tr.clickable { cursor: pointer; } tr.clickable:hover td { background: #f7f9fb; }
tr.sub td { color: #4a5663; font-size: 12px; background: #fafbfc; }
tr.failed td { color: #c62828; }
.scroll { max-height: 360px; overflow-y: auto; }
.scroll th { position: sticky; top: 0; }
svg text { font: 12px system-ui, sans-serif; }
.node rect { fill: #e8f0fe; stroke: #1565c0; rx: 6; }
.edge { stroke: #6b7785; fill: none; marker-end: url(#arrow); }
.bar { fill: #1565c0; } .bar.align { fill: #ef6c00; }
.actions button { margin-right: 8px; }
`;

const SCRIPT = `
'use strict';
const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
function el(tag, attrs, ...children) {
  const ns = ['svg','g','rect','text','path','line','defs','marker','title'].includes(tag);
  const e = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
const num = (n) => Math.round(n).toLocaleString('en-US');
const ms = (n) => (n < 10 ? n.toFixed(1) : num(n)) + ' ms';
const bytes = (n) => n < 1024 ? n + ' B' : n < 1048576 ? (n / 1024).toFixed(1) + ' KiB' : (n / 1048576).toFixed(1) + ' MiB';
const time = (t) => new Date(t).toLocaleTimeString('en-GB');
const pct = (x) => (x === null || x === undefined ? '–' : Math.round(x * 100) + '%');
const lagText = (l) => (l === null ? '–' : l.unit === 'bytes' ? bytes(l.value) : num(l.value) + ' records');
/** An event-time lag: seconds, or days when the job's timestamps are not wall-clock times. */
const lagMs = (n) => (n === null ? '–' : Math.abs(n) < 864e5 ? (n / 1000).toFixed(1) + ' s' : num(n / 864e5) + ' d');
/** A watermark: a wall-clock time when it looks like one (after 2000-01-01), else a number. */
const wm = (w) => (w > 946684800000 ? new Date(w).toISOString().slice(11, 23) : num(w));

function renderHeader(s) {
  const st = $('status');
  st.textContent = s.status;
  st.className = 'status ' + s.status;
  $('attempt').textContent = 'attempt ' + s.attempt;
  $('uptime').textContent = 'up ' + num((s.updatedAt - s.startedAt) / 1000) + ' s';
}

/** Columns by longest path from a source; rows in column order. */
function layout(plan) {
  const level = new Map(plan.vertices.map((v) => [v.id, 0]));
  for (let changed = true, guard = 0; changed && guard < 1000; guard++) {
    changed = false;
    for (const e of plan.edges) {
      if (level.get(e.to) < level.get(e.from) + 1) { level.set(e.to, level.get(e.from) + 1); changed = true; }
    }
  }
  const rows = new Map();
  const pos = new Map();
  for (const v of plan.vertices) {
    const col = level.get(v.id);
    const row = rows.get(col) || 0;
    rows.set(col, row + 1);
    pos.set(v.id, { x: 20 + col * 370, y: 20 + row * 120 });
  }
  return { pos, width: 20 + (Math.max(...level.values()) + 1) * 370, height: 20 + Math.max(...rows.values()) * 120 };
}

function renderPlan(s) {
  const { pos, width, height } = layout(s.plan);
  const svg = el('svg', { width, height, viewBox: '0 0 ' + width + ' ' + height, 'data-testid': 'plan' });
  svg.append(el('defs', {}, el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto' }, el('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#6b7785' }))));
  for (const e of s.plan.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    const x1 = a.x + 260, y1 = a.y + 40, x2 = b.x, y2 = b.y + 40;
    svg.append(el('path', { class: 'edge', d: 'M' + x1 + ',' + y1 + ' C' + (x1 + 30) + ',' + y1 + ' ' + (x2 - 30) + ',' + y2 + ' ' + x2 + ',' + y2 }));
    svg.append(el('text', { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 6, fill: '#6b7785', 'text-anchor': 'middle' }, e.partitioning + ' · ' + e.channels + ' ch'));
  }
  for (const t of s.tasks) {
    const p = pos.get(t.id);
    svg.append(el('g', { class: 'node', 'data-testid': 'task-node', transform: 'translate(' + p.x + ',' + p.y + ')' },
      el('title', {}, t.operators.map((o) => o.name + ' (' + o.kind + ')').join(' -> ')),
      el('rect', { width: 260, height: 96 }),
      el('text', { x: 8, y: 18, 'font-weight': 600 }, (t.name.length > 30 ? t.name.slice(0, 29) + '…' : t.name)),
      el('text', { x: 8, y: 38 }, 'parallelism ' + t.parallelism + ' · ' + t.operators.length + ' operator(s)'),
      el('text', { x: 8, y: 56 }, 'in ' + num(t.inPerSec) + '/s'),
      el('text', { x: 8, y: 72 }, 'out ' + num(t.outPerSec) + '/s' +
        (t.watermark === null ? '' : ' · watermark ' + wm(t.watermark))),
      el('text', { x: 8, y: 88, 'data-testid': 'task-load' }, t.load.shares === null ? 'busy –' :
        'busy ' + pct(t.load.shares.busy) + ' · backpressured ' + pct(t.load.shares.backpressured) +
        ' · idle ' + pct(t.load.shares.idle))));
  }
  $('plan').replaceChildren(svg);
}

/** Task ids whose per-subtask rows are shown (a click on the task's row toggles). */
const expandedTasks = new Set();
function renderLoad(s) {
  const rows = [];
  for (const t of s.tasks) {
    const sh = t.load.shares;
    const row = el('tr', { 'data-testid': 'task-row', class: 'clickable', title: 'show subtasks' },
      el('td', {}, t.id), el('td', { class: 'name' }, (expandedTasks.has(t.id) ? '▾ ' : '▸ ') + t.name),
      el('td', {}, pct(sh && sh.busy)), el('td', {}, pct(sh && sh.backpressured)), el('td', {}, pct(sh && sh.idle)),
      el('td', {}, pct(t.load.outputFill)), el('td', {}, pct(t.load.inputFill)),
      el('td', {}, t.watermark === null ? '–' : wm(t.watermark)), el('td', { 'data-testid': 'event-time-lag' }, lagMs(t.eventTimeLagMs)));
    row.onclick = () => {
      if (expandedTasks.has(t.id)) expandedTasks.delete(t.id); else expandedTasks.add(t.id);
      renderLoad(s);
    };
    rows.push(row);
    if (!expandedTasks.has(t.id)) continue;
    for (const l of t.load.subtasks) {
      const w = t.watermarks[l.subtask];
      rows.push(el('tr', { 'data-testid': 'task-subtask-row', class: 'sub' }, el('td', {}), el('td', { class: 'name' }, 'subtask ' + l.subtask),
        el('td', {}, pct(l.shares && l.shares.busy)), el('td', {}, pct(l.shares && l.shares.backpressured)), el('td', {}, pct(l.shares && l.shares.idle)),
        el('td', {}, pct(l.outputFill)), el('td', {}, pct(l.inputFill)), el('td', {}, w === null ? '–' : wm(w)), el('td', {})));
    }
  }
  $('tasks').replaceChildren(...rows);
}

/** Operator ids whose per-subtask rows are shown (a click on the operator's row toggles). */
const expanded = new Set();
function renderTasks(s) {
  const rows = [];
  for (const t of s.tasks) for (const o of t.operators) {
    const row = el('tr', { 'data-testid': 'operator-row', class: 'clickable', title: 'show subtasks' },
      el('td', {}, t.id), el('td', { class: 'name' }, (expanded.has(o.id) ? '▾ ' : '▸ ') + o.name),
      el('td', { class: 'name' }, o.kind), el('td', {}, t.parallelism), el('td', {}, num(o.recordsIn)), el('td', {}, num(o.recordsOut)),
      el('td', {}, num(o.inPerSec)), el('td', {}, num(o.outPerSec)), el('td', { 'data-testid': 'source-lag' }, lagText(o.sourceLag)));
    row.onclick = () => {
      if (expanded.has(o.id)) expanded.delete(o.id); else expanded.add(o.id);
      renderTasks(s);
    };
    rows.push(row);
    if (!expanded.has(o.id)) continue;
    for (const st of o.subtasks) {
      const counters = Object.entries(st.counters).map(([k, v]) => k + ' ' + num(v)).join(', ');
      rows.push(el('tr', { 'data-testid': 'subtask-row', class: 'sub' }, el('td', {}), el('td', { class: 'name' }, 'subtask ' + st.subtask),
        el('td', { class: 'name' }, counters), el('td', {}), el('td', {}, num(st.recordsIn)), el('td', {}, num(st.recordsOut)),
        el('td', {}), el('td', {}), el('td', {}, lagText(st.sourceLag))));
    }
  }
  $('operators').replaceChildren(...rows);
}

/** Checkpoint ids whose per-subtask rows are shown (a click on the checkpoint's row toggles). */
const expandedCheckpoints = new Set();
function renderCheckpoints(s) {
  const c = s.checkpoints;
  $('cp-summary').textContent = !c.enabled ? 'checkpointing is off' :
    c.completed + ' completed, ' + c.failed + ' failed, ' + c.aborted + ' aborted' +
    (c.latestRestore ? ' · restored from ' + c.latestRestore.checkpointId : '');
  const done = c.history.map((k) => {
    const row = el('tr', { 'data-testid': 'checkpoint-row', class: 'clickable', title: 'show subtasks' },
      el('td', {}, k.checkpointId), el('td', k.switchedToUnaligned ? { title: 'an alignment exceeded checkpointing.alignmentTimeout: taken unaligned there, with channel state' } : {}, (expandedCheckpoints.has(k.checkpointId) ? '▾ ' : '▸ ') + 'completed' + (k.switchedToUnaligned ? ' · unaligned' : '')), el('td', {}, time(k.triggerTimestamp)), el('td', {}, ms(k.durationMs)),
      el('td', {}, ms(k.maxAlignmentDurationMs)), el('td', {}, ms(k.maxSyncDurationMs)), el('td', {}, ms(k.maxAsyncDurationMs)),
      el('td', {}, bytes(k.bytes)));
    row.onclick = () => {
      if (expandedCheckpoints.has(k.checkpointId)) expandedCheckpoints.delete(k.checkpointId); else expandedCheckpoints.add(k.checkpointId);
      renderCheckpoints(s);
    };
    const rows = [row];
    if (expandedCheckpoints.has(k.checkpointId)) for (const t of k.subtasks)
      rows.push(el('tr', { 'data-testid': 'checkpoint-subtask-row', class: 'sub' }, el('td', {}), el('td', { class: 'name' }, 'subtask ' + t.task + (t.switchedToUnaligned ? ' · unaligned' : '')),
        el('td', {}), el('td', {}), el('td', {}, ms(t.alignmentDurationMs)), el('td', {}, ms(t.syncDurationMs)),
        el('td', {}, ms(t.asyncDurationMs)), el('td', {}, bytes(t.bytes))));
    return { id: k.checkpointId, rows };
  });
  const failed = c.failures.map((f) => ({ id: f.checkpointId, row: el('tr', { 'data-testid': 'checkpoint-failed-row', class: 'failed' },
    el('td', {}, f.checkpointId), el('td', {}, f.reason), el('td', {}, time(f.triggerTimestamp)),
    el('td', { colspan: 5, class: 'name', title: f.message }, f.message.split('\\n')[0])) })).map((f) => ({ id: f.id, rows: [f.row] }));
  const rows = done.concat(failed).sort((a, b) => b.id - a.id).flatMap((r) => r.rows);
  $('checkpoints').replaceChildren(...rows);
  const last = c.history.slice(-60);
  const w = 600, h = 120, max = Math.max(1, ...last.map((k) => k.durationMs));
  const bw = w / 60;
  const svg = el('svg', { width: w, height: h + 16, viewBox: '0 0 ' + w + ' ' + (h + 16), 'data-testid': 'checkpoint-chart' });
  last.forEach((k, i) => {
    const bh = (k.durationMs / max) * h, ah = (k.maxAlignmentDurationMs / max) * h;
    svg.append(el('rect', { class: 'bar', x: i * bw + 1, y: h - bh, width: bw - 2, height: Math.max(1, bh) }, el('title', {}, '#' + k.checkpointId + ' ' + ms(k.durationMs))));
    if (ah > 0) svg.append(el('rect', { class: 'bar align', x: i * bw + 1, y: h - ah, width: bw - 2, height: ah }));
  });
  svg.append(el('text', { x: 0, y: h + 14, fill: '#6b7785' }, 'duration (blue), alignment (orange); max ' + ms(max)));
  $('cp-chart').replaceChildren(svg);
}

function renderFailures(s) {
  const items = [];
  if (s.failure) items.push(el('div', { 'data-testid': 'failure' }, el('b', {}, 'job failed ' + time(s.failure.at) + ': ' + s.failure.message), el('pre', {}, s.failure.stack)));
  for (const r of s.restarts.history.slice().reverse())
    items.push(el('div', { 'data-testid': 'restart' }, el('b', {}, 'restart to attempt ' + r.attempt + ' at ' + time(r.at) + ': ' + r.message), el('pre', {}, r.stack)));
  for (const w of s.warnings.history.slice().reverse())
    items.push(el('div', { 'data-testid': 'warning' }, el('b', {}, 'warning ' + time(w.at) + ': ' + w.message), el('pre', {}, w.stack)));
  $('failures-summary').textContent = s.restarts.count + ' restart(s), ' + s.warnings.count + ' warning(s)';
  $('failures').replaceChildren(...items);
}

function render(s) {
  renderHeader(s);
  renderPlan(s);
  renderLoad(s);
  renderTasks(s);
  renderCheckpoints(s);
  renderFailures(s);
  return s;
}

const ENDED = ['finished', 'stopped', 'failed', 'cancelled'];
const source = new EventSource('api/events');
source.onmessage = (m) => {
  const s = render(JSON.parse(m.data));
  if (ENDED.includes(s.status)) source.close();
};
source.onerror = () => { $('conn').textContent = 'disconnected (retrying)'; };
source.onopen = () => { $('conn').textContent = 'live'; };

async function act(path) {
  const token = $('token').value;
  const r = await fetch(path, { method: 'POST', headers: { authorization: 'Bearer ' + token } });
  $('action-result').textContent = r.status + ' ' + (await r.text());
}
if ($('cancel')) {
  $('cancel').onclick = () => act('api/cancel');
  $('savepoint').onclick = () => act('api/stop-with-savepoint?dir=' + encodeURIComponent($('sp-dir').value));
}
`;

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** The page for job `job`; `actions` adds the token form (the server still checks the token). */
export function dashboardPage(job: string, actions: boolean): string {
  const title = escapeHtml(job);
  const actionForm = actions
    ? `<section class="actions"><h2>Actions</h2>
<input id="token" type="password" placeholder="token" autocomplete="off">
<button id="cancel">Cancel job</button>
<input id="sp-dir" placeholder="savepoint directory"> <button id="savepoint">Stop with savepoint</button>
<span id="action-result" class="muted"></span></section>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>weir · ${title}</title>
<style>${STYLE}</style></head>
<body>
<header><h1>weir · <span id="job">${title}</span></h1><span id="status" class="status">connecting</span>
<span id="attempt"></span><span id="uptime"></span><span id="conn" class="muted"></span></header>
<main>
<section><h2>Execution plan</h2><div id="plan"></div></section>
<section><h2>Tasks</h2><table><thead><tr><th>task</th><th>name</th><th>busy</th><th>backpressured</th><th>idle</th>
<th>output ring</th><th>input ring</th><th>watermark</th><th>event-time lag</th></tr></thead><tbody id="tasks"></tbody></table></section>
<section><h2>Operators</h2><table><thead><tr><th>task</th><th>operator</th><th>kind</th><th>parallelism</th>
<th>records in</th><th>records out</th><th>in/s</th><th>out/s</th><th>source lag</th></tr></thead><tbody id="operators"></tbody></table></section>
<section><h2>Checkpoints <span id="cp-summary" class="muted"></span></h2><div id="cp-chart"></div>
<div class="scroll"><table><thead><tr><th>id</th><th>status</th><th>triggered</th><th>duration</th><th>alignment</th><th>sync</th><th>async</th><th>size</th></tr></thead>
<tbody id="checkpoints"></tbody></table></div></section>
<section><h2>Failures <span id="failures-summary" class="muted"></span></h2><div id="failures"></div></section>
${actionForm}
</main>
<script>${SCRIPT}</script>
</body></html>`;
}
