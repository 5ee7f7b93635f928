// Parse Config: parameters with their types and `masterKeyOnly`, through `/config`.
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';
import { editor } from './values.js';

function typeOf(value) {
  if (value === null || value === undefined) return 'String';
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value === 'number') return 'Number';
  if (typeof value === 'string') return 'String';
  if (value.__type === 'Date') return 'Date';
  if (value.__type === 'GeoPoint') return 'GeoPoint';
  return Array.isArray(value) ? 'Array' : 'Object';
}

export async function configView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const body = h('div', {});
  async function load() {
    await busy(body, status, async () => {
      const config = await api.parse('GET', '/config');
      const params = config.params ?? {};
      const masterOnly = config.masterKeyOnly ?? {};
      const rows = Object.keys(params).sort().map((name) => {
        const ed = editor(typeOf(params[name]), params[name]);
        const only = h('input', { type: 'checkbox', 'aria-label': `${name} master key only`, checked: masterOnly[name] === true, disabled: readOnly });
        return h('tr', {}, h('td', {}, name), h('td', {}, typeOf(params[name])), h('td', {}, ed.element), h('td', {}, only),
          h('td', {}, readOnly ? '' : button('Save', () => busy(body, status, async () => {
            await api.parse('PUT', '/config', { params: { [name]: ed.read() }, masterKeyOnly: { [name]: only.checked } });
            await load();
          })), readOnly ? '' : button('Delete', () => busy(body, status, async () => {
            if (!confirm(`Delete the parameter ${name}?`)) return;
            await api.parse('PUT', '/config', { params: { [name]: { __op: 'Delete' } } });
            await load();
          }), { class: 'danger' })));
      });
      clear(body, h('table', { class: 'data' }, h('thead', {}, h('tr', {}, ['name', 'type', 'value', 'master key only', ''].map((t) => h('th', {}, t)))), h('tbody', {}, rows)));
    });
  }
  const name = h('input', { type: 'text', 'aria-label': 'parameter name', placeholder: 'name' });
  const type = h('select', { 'aria-label': 'parameter type' }, ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'GeoPoint'].map((t) => h('option', {}, t)));
  const slot = h('span', {});
  let ed = editor('String');
  const refresh = () => { ed = editor(type.value); clear(slot, ed.element); };
  type.addEventListener('change', refresh);
  refresh();
  const add = h('form', { onsubmit: (e) => { e.preventDefault(); busy(body, status, async () => { await api.parse('PUT', '/config', { params: { [name.value]: ed.read() } }); await load(); }); } },
    name, type, slot, h('button', { type: 'submit', class: 'primary' }, 'Add parameter'));
  clear(root, h('h2', {}, 'Config'), readOnly ? null : add, status, body);
  await load();
}
