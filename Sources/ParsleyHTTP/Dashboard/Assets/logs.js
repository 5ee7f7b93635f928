// Logs: the server's recent lines as a table (time, level, status, method, path, duration, request id, user,
// message) with a filter on each column, slowest requests first on demand, every line of one request by a click on
// its id, and a live tail. Filters live in the URL (#/logs?status=5xx&requestId=...), so the health charts link here.
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';

const COLUMNS = [
  ['time', 'Time'], ['level', 'Level'], ['status', 'Status'], ['method', 'Method'], ['path', 'Path'], ['durationMs', 'ms'],
  ['requestId', 'Request id'], ['user', 'User'], ['message', 'Message'],
];
// Left out on a phone's width (the table scrolls sideways for the rest).
const WIDE = new Set(['level', 'user', 'message']);

function time(ms) {
  const d = new Date(ms);
  return `${d.toLocaleTimeString([], { hour12: false })}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

export async function logsView(root, params = {}) {
  const filters = { level: 'verbose', ...params };
  const status = h('div', { class: 'status' });
  const body = h('tbody', {});
  const count = h('span', { class: 'total' });
  let latest = 0;
  let shown = [];

  function go(changes) {
    const next = { ...filters, ...changes };
    const query = Object.entries(next).filter(([, v]) => v !== '' && v !== undefined && v !== null)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    location.hash = `#/logs${query ? `?${query}` : ''}`;
  }

  function input(key, attrs) {
    const el = h('input', { type: 'search', 'aria-label': `filter ${key}`, value: filters[key] ?? '', ...attrs });
    el.addEventListener('change', () => go({ [key]: el.value }));
    return el;
  }
  function select(key, options) {
    const el = h('select', { 'aria-label': `filter ${key}` }, options.map(([value, label]) => h('option', { value, selected: (filters[key] ?? '') === value }, label)));
    el.addEventListener('change', () => go({ [key]: el.value }));
    return el;
  }
  const since = h('select', { 'aria-label': 'filter time' },
    [['', 'any time'], ['60', 'last minute'], ['300', 'last 5 min'], ['900', 'last 15 min'], ['3600', 'last hour']]
      .map(([value, label]) => h('option', { value }, label)));
  since.addEventListener('change', () => go({ from: since.value ? Date.now() - Number(since.value) * 1000 : '', until: '' }));
  const filterRow = h('tr', { class: 'filters' },
    h('th', {}, since),
    h('th', { class: 'wide' }, select('level', [['verbose', 'all'], ['info', 'info'], ['warn', 'warn'], ['error', 'error']])),
    h('th', {}, select('status', [['', 'any'], ['2xx', '2xx'], ['3xx', '3xx'], ['4xx', '4xx'], ['5xx', '5xx'], ['errors', '4xx+5xx']])),
    h('th', {}, select('method', [['', 'any'], ...['GET', 'POST', 'PUT', 'DELETE'].map((m) => [m, m])])),
    h('th', {}, input('path', { placeholder: 'contains' })),
    h('th', {}, input('minMs', { placeholder: '≥ ms', type: 'number', min: 0 })),
    h('th', {}, input('requestId', { placeholder: 'id' })),
    h('th', { class: 'wide' }, input('user', { placeholder: 'objectId' })),
    h('th', { class: 'wide' }, input('text', { placeholder: 'text' })));

  function row(e) {
    const cells = {
      time: time(e.time), level: e.level, status: e.status ?? '', method: e.method ?? '', path: e.path ?? '',
      durationMs: e.durationMs === undefined ? '' : e.durationMs.toFixed(2), user: e.user ?? '',
      requestId: e.requestId ? button(e.requestId, () => go({ requestId: e.requestId, status: '', method: '', path: '', minMs: '', text: '', sort: '', from: '', until: '' }),
        { class: 'link', 'aria-label': `lines of request ${e.requestId}` }) : '',
      message: e.method ? '' : e.message,
    };
    const classes = [`level-${e.level}`, e.status ? `status-${String(e.status)[0]}` : ''].join(' ');
    return h('tr', { class: classes, dataset: { sequence: e.sequence, requestId: e.requestId ?? '' } },
      COLUMNS.map(([key]) => h('td', { class: [key === 'message' ? 'message' : '', WIDE.has(key) ? 'wide' : ''].join(' '), dataset: { column: key } }, cells[key])));
  }

  function render() {
    clear(body, shown.map(row));
    count.textContent = `${shown.length} line${shown.length === 1 ? '' : 's'}${filters.sort === 'slow' ? ', slowest first' : ''}`;
  }

  async function load() {
    await busy(body, status, async () => {
      const answer = await api.logs({ ...filters, limit: 500 });
      shown = answer.results;
      latest = answer.latest;
      render();
    });
  }

  async function tail() {
    const answer = await api.logs({ ...filters, after: latest, limit: 500 });
    latest = Math.max(latest, answer.latest);
    if (answer.results.length === 0) return;
    shown = filters.sort === 'slow'
      ? [...answer.results, ...shown].sort((a, b) => b.durationMs - a.durationMs).slice(0, 500)
      : [...answer.results, ...shown].slice(0, 500);
    render();
  }

  const slow = button('Slowest first', () => go({ sort: filters.sort === 'slow' ? '' : 'slow' }), { 'aria-pressed': String(filters.sort === 'slow') });
  const live = button('Live tail', () => {
    const on = live.getAttribute('aria-pressed') !== 'true';
    live.setAttribute('aria-pressed', String(on));
  }, { 'aria-pressed': 'false' });
  const chips = [];
  if (filters.requestId) chips.push(h('span', { class: 'chip' }, `request ${filters.requestId}`, button('×', () => go({ requestId: '' }), { class: 'link', 'aria-label': 'all requests' })));
  if (filters.from || filters.until) {
    const span = `${filters.from ? time(Number(filters.from)) : '…'} – ${filters.until ? time(Number(filters.until)) : '…'}`;
    chips.push(h('span', { class: 'chip' }, span, button('×', () => go({ from: '', until: '' }), { class: 'link', 'aria-label': 'any time' })));
  }
  const head = h('tr', {}, COLUMNS.map(([key, label]) => h('th', { class: WIDE.has(key) ? 'wide' : '' }, label)));
  clear(root,
    h('div', { class: 'toolbar' }, h('h2', {}, 'Logs'), count, slow, live, button('Refresh', load)),
    h('div', { class: 'chips' }, chips), status,
    h('div', { class: 'table-wrap' }, h('table', { class: 'data logs', 'aria-label': 'log lines' }, h('thead', {}, head, filterRow), body)));
  await load();
  const timer = setInterval(() => {
    if (!body.isConnected) { clearInterval(timer); return; }
    if (live.getAttribute('aria-pressed') === 'true') tail().catch(() => {});
  }, 2000);
}
