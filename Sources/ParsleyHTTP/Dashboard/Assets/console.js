// API console: any REST request with the dashboard's credentials, and the answer as the server sent it.
import { h, clear, busy } from './dom.js';
import * as api from './api.js';

export function consoleView(root) {
  const method = h('select', { 'aria-label': 'method' }, ['GET', 'POST', 'PUT', 'DELETE'].map((m) => h('option', {}, m)));
  const path = h('input', { type: 'text', 'aria-label': 'path', value: '/classes/_User?limit=5', size: 50 });
  const body = h('textarea', { rows: 6, class: 'json', 'aria-label': 'body', placeholder: '{"key": "value"}' });
  const answer = h('pre', { class: 'answer', 'aria-label': 'answer' });
  const status = h('div', { class: 'status' });
  const form = h('form', { class: 'console', onsubmit: (e) => {
    e.preventDefault();
    busy(answer, status, async () => {
      const r = await api.raw(method.value, path.value.startsWith('/') ? path.value : '/' + path.value, body.value.trim() || undefined);
      let text = r.text;
      try { text = JSON.stringify(JSON.parse(r.text), null, 2); } catch { /* shown as it came */ }
      answer.textContent = `${r.status}\n${text}`;
    });
  } }, h('div', { class: 'row' }, method, h('span', {}, api.current().mountPath), path, h('button', { type: 'submit', class: 'primary' }, 'Send')), body);
  clear(root, h('h2', {}, 'API console'), api.current().readOnly ? h('p', { class: 'note' }, 'Read-only: only GET requests are answered.') : null, form, status, answer);
}
