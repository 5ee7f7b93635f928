// Health: this process's figures now (version, database, requests, LiveQuery) and charts of the last hour or since
// the start, from the server's ring of per-second samples; refreshed every 5 seconds while the page is shown.
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';
import { lineChart } from './charts.js';

function logsLink(filters) {
  return (from, until) => {
    const params = { from: Math.floor(from), until: Math.ceil(until), ...filters };
    return `#/logs?${Object.entries(params).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`;
  };
}

function charts(m) {
  const step = m.step;
  const perSecond = (values) => values.map((v) => v / step);
  const pool = m.readersBusy.map((busy, i) => (m.readers[i] ? (busy / m.readers[i]) * 100 : 0));
  const defs = [
    ['requests', 'Requests', '/s', [['requests/s', 'a', perSecond(m.requests)]], {}],
    ['latency', 'Latency', 'ms', [['p50', 'a', m.p50], ['p99', 'b', m.p99]], { sort: 'slow' }],
    ['errors', 'Errors', '/s', [['4xx', 'a', perSecond(m.clientErrors)], ['5xx', 'b', perSecond(m.serverErrors)]], { status: 'errors' }],
    ['writes', 'Writes queued', '', [['queued', 'a', m.writesQueued]], { sort: 'slow' }],
    ['pool', 'Database pool in use', '%', [['readers busy', 'a', pool]], {}],
    ['livequery', 'LiveQuery', '', [['connections', 'a', m.liveQueryConnections], ['events/s', 'b', perSecond(m.liveQueryEvents)]],
      { text: 'livequery' }],
    ['push', 'Push', '', [['sent', 'a', m.pushSent], ['failed', 'b', m.pushFailed]], { text: 'push' }],
  ];
  return defs.map(([id, title, unit, series, filters]) => lineChart({
    id, title, unit, times: m.time, step, logs: logsLink(filters),
    series: series.map(([name, key, values]) => ({ name, key, values })),
  }));
}

export async function healthView(root) {
  const status = h('div', { class: 'status' });
  const table = h('table', { class: 'data figures' });
  const grid = h('div', { class: 'charts', 'aria-label': 'charts' });
  let range = 'hour';
  let data = null;
  const ranges = [['hour', 'Last hour'], ['all', 'Since start']].map(([value, label]) => button(label, () => {
    range = value;
    data = null;
    for (const b of ranges) b.setAttribute('aria-pressed', String(b.dataset.range === range));
    drawCharts();
  }, { 'aria-pressed': String(value === range), dataset: { range: value } }));
  // The last hour is fetched once, then only the seconds after the last point.
  async function drawCharts() {
    const last = data?.time[data.time.length - 1];
    if (range === 'hour' && data?.step === 1 && last !== undefined) {
      const more = await api.metrics(range, last);
      if (more.step === 1) {
        for (const [key, values] of Object.entries(more)) {
          if (Array.isArray(values)) data[key] = data[key].concat(values).slice(-3600);
        }
      } else {
        data = more;
      }
    } else {
      data = await api.metrics(range);
    }
    clear(grid, charts(data));
  }
  async function load() {
    await busy(table, status, async () => {
      const [s] = await Promise.all([api.health(), drawCharts()]);
      const rows = [
        ['version', s.version], ['up for', `${s.uptimeSeconds} s`],
        ['database', `${s.database.kind}, ${s.database.answers ? 'answering' : 'NOT answering'}`],
        ['readers busy / pool', `${s.database.readersBusy} / ${s.database.readers}`], ['writes queued', s.database.writesQueued],
        ['requests', `${s.requests.total} (${s.requests.perSecond}/s on average), ${s.requests.serverErrors} server errors`],
        ['LiveQuery', `${s.liveQuery.connections} connections, ${s.liveQuery.subscriptions} subscriptions`],
      ];
      clear(table, h('tbody', {}, rows.map(([k, v]) => h('tr', { dataset: { figure: k } }, h('th', {}, k), h('td', {}, String(v))))));
    });
  }
  clear(root, h('div', { class: 'toolbar' }, h('h2', {}, 'Health'), ...ranges, button('Refresh', load)), status, table,
    h('p', { class: 'note' }, 'Click a chart to see the log lines of that moment.'), grid);
  await load();
  const timer = setInterval(() => {
    if (!root.isConnected || !grid.isConnected) { clearInterval(timer); return; }
    drawCharts().catch(() => {});
  }, 5000);
}
