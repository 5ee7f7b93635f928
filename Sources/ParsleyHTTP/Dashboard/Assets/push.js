// Push: compose a notification for an audience (channels or a query on installations), see the payload before it
// goes, and the history from _PushStatus.
import { h, clear, busy } from './dom.js';
import * as api from './api.js';

export async function pushView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const channels = h('input', { type: 'text', 'aria-label': 'channels', placeholder: 'channels, comma separated (empty: use the query)' });
  const where = h('textarea', { rows: 3, class: 'json', 'aria-label': 'audience query' });
  where.value = '{"deviceType": {"$in": ["ios", "android"]}}';
  const alert = h('input', { type: 'text', 'aria-label': 'alert', placeholder: 'message' });
  const badge = h('input', { type: 'text', 'aria-label': 'badge', placeholder: 'badge: a number or Increment' });
  const extra = h('textarea', { rows: 3, class: 'json', 'aria-label': 'extra data' });
  extra.value = '{}';
  const preview = h('pre', { class: 'answer', 'aria-label': 'payload' });
  const audience = h('p', { class: 'note' });
  const history = h('div', {});

  function body() {
    const data = { ...JSON.parse(extra.value || '{}') };
    if (alert.value) data.alert = alert.value;
    if (badge.value) data.badge = /^\d+$/.test(badge.value) ? Number(badge.value) : badge.value;
    const push = { data };
    const list = channels.value.split(',').map((c) => c.trim()).filter(Boolean);
    if (list.length) push.channels = list; else push.where = JSON.parse(where.value || '{}');
    return push;
  }
  async function refresh() {
    try {
      const push = body();
      preview.textContent = JSON.stringify(push, null, 2);
      const count = await api.parse('GET', '/classes/_Installation', { where: push.where ?? { channels: { $in: push.channels } }, count: 1, limit: 0 });
      audience.textContent = `${count.count} installation${count.count === 1 ? '' : 's'} in this audience`;
    } catch (error) {
      preview.textContent = `Invalid JSON: ${error.message ?? error.error}`;
    }
  }
  async function loadHistory() {
    const statuses = (await api.parse('GET', '/classes/_PushStatus', { order: '-createdAt', limit: 20 })).results;
    clear(history, h('table', { class: 'data' }, h('tbody', {}, statuses.map((s) => h('tr', { dataset: { pushStatus: s.objectId } },
      h('td', {}, s.createdAt), h('td', {}, s.status), h('td', {}, `${s.numSent ?? 0} sent, ${s.numFailed ?? 0} failed`),
      h('td', {}, s.payload ?? ''))))));
  }
  for (const input of [channels, where, alert, badge, extra]) input.addEventListener('input', refresh);
  const form = h('form', { class: 'push', onsubmit: (e) => {
    e.preventDefault();
    busy(form, status, async () => { await api.parse('POST', '/push', body()); await loadHistory(); });
  } },
  h('label', {}, 'Channels', channels), h('label', {}, 'or installations where (JSON)', where),
  h('label', {}, 'Alert', alert), h('label', {}, 'Badge', badge), h('label', {}, 'More data (JSON)', extra),
  audience, h('h4', {}, 'Payload'), preview,
  readOnly ? null : h('button', { type: 'submit', class: 'primary' }, 'Send push'));
  clear(root, h('h2', {}, 'Push'), form, status, h('h3', {}, 'History'), history);
  await refresh();
  await busy(history, status, loadHistory);
}
