// Logs (the server's recent lines through /scriptlog, filtered by level and text) and health (version, database,
// requests, LiveQuery).
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';

export async function logsView(root) {
  const status = h('div', { class: 'status' });
  const level = h('select', { 'aria-label': 'level' }, ['info', 'warn', 'error', 'verbose'].map((l) => h('option', { value: l }, l)));
  const text = h('input', { type: 'search', 'aria-label': 'filter text', placeholder: 'text' });
  const lines = h('pre', { class: 'answer log', 'aria-label': 'log lines' });
  async function load() {
    await busy(lines, status, async () => {
      const entries = await api.parse('GET', '/scriptlog', { level: level.value, n: 500 });
      const needle = text.value.toLowerCase();
      lines.textContent = entries.filter((e) => !needle || e.message.toLowerCase().includes(needle))
        .map((e) => `${e.timestamp} ${e.level} ${e.message}`).join('\n');
    });
  }
  level.addEventListener('change', load);
  text.addEventListener('input', load);
  clear(root, h('h2', {}, 'Logs'), h('div', { class: 'row' }, level, text, button('Refresh', load)), status, lines);
  await load();
}

export async function healthView(root) {
  const status = h('div', { class: 'status' });
  const table = h('table', { class: 'data' });
  async function load() {
    await busy(table, status, async () => {
      const s = await api.health();
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
  clear(root, h('h2', {}, 'Health'), button('Refresh', load), status, table);
  await load();
}
