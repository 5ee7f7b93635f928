// Schema: classes, columns of every type (with required and defaultValue), indexes, class-level permissions and
// protected fields, each through `/schemas`.
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';
import { TYPES, editor } from './values.js';

const OPERATIONS = ['find', 'count', 'get', 'create', 'update', 'delete', 'addField'];
const BUILTIN = ['objectId', 'createdAt', 'updatedAt', 'ACL'];

export async function schemaView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const list = h('div', {});
  const newClass = h('input', { type: 'text', 'aria-label': 'new class name', placeholder: 'ClassName', pattern: '[A-Za-z][A-Za-z0-9_]*' });

  async function load() {
    await busy(list, status, async () => {
      const schemas = (await api.parse('GET', '/schemas')).results.sort((a, b) => a.className.localeCompare(b.className));
      clear(list, schemas.map(classCard));
    });
  }

  function classCard(schema) {
    const name = schema.className;
    const path = `/schemas/${encodeURIComponent(name)}`;
    const cardStatus = h('div', { class: 'status' });
    const change = (body) => busy(card, cardStatus, async () => { await api.parse('PUT', path, { className: name, ...body }); await load(); });
    const rows = Object.entries(schema.fields).map(([field, spec]) => h('tr', {},
      h('td', {}, field), h('td', {}, spec.type + (spec.targetClass ? ` → ${spec.targetClass}` : '')),
      h('td', {}, spec.required ? 'required' : ''),
      h('td', {}, spec.defaultValue === undefined ? '' : JSON.stringify(spec.defaultValue)),
      h('td', {}, readOnly || BUILTIN.includes(field) ? '' : button('Delete column', () => {
        if (confirm(`Delete column ${field} of ${name} and its data?`)) change({ fields: { [field]: { __op: 'Delete' } } });
      }, { class: 'danger' }))));

    // Add a column.
    const fieldName = h('input', { type: 'text', 'aria-label': 'column name', placeholder: 'column' });
    const fieldType = h('select', { 'aria-label': 'column type' }, TYPES.filter((t) => t !== 'ACL').map((t) => h('option', { value: t }, t)));
    const target = h('input', { type: 'text', 'aria-label': 'target class', placeholder: 'target class (Pointer, Relation)' });
    const required = h('input', { type: 'checkbox', 'aria-label': 'required' });
    const defaultSlot = h('span', {});
    let defaultEditor = null;
    const refreshDefault = () => {
      defaultEditor = ['Relation', 'File', 'Bytes'].includes(fieldType.value) ? null : editor(fieldType.value, undefined, { targetClass: target.value });
      clear(defaultSlot, defaultEditor ? h('label', {}, 'default ', defaultEditor.element) : null);
    };
    fieldType.addEventListener('change', refreshDefault);
    refreshDefault();
    const addColumn = h('form', { class: 'add-column', onsubmit: (event) => {
      event.preventDefault();
      const spec = { type: fieldType.value };
      if (['Pointer', 'Relation'].includes(fieldType.value)) spec.targetClass = target.value;
      if (required.checked) spec.required = true;
      busy(card, cardStatus, async () => {
        const value = defaultEditor?.read();
        if (value !== null && value !== undefined && value !== '' && !(fieldType.value === 'Boolean' && value === false && !required.checked)) spec.defaultValue = value;
        await api.parse('PUT', path, { className: name, fields: { [fieldName.value]: spec } });
        await load();
      });
    } }, fieldName, fieldType, target, h('label', {}, required, ' required'), defaultSlot, h('button', { type: 'submit' }, 'Add column'));

    // Indexes.
    const indexes = Object.entries(schema.indexes ?? {}).map(([index, keys]) => h('li', {}, `${index}: ${JSON.stringify(keys)} `,
      readOnly || index === '_id_' ? null : button('Delete index', () => change({ indexes: { [index]: { __op: 'Delete' } } }), { class: 'danger' })));
    const indexName = h('input', { type: 'text', 'aria-label': 'index name', placeholder: 'index name' });
    const indexField = h('input', { type: 'text', 'aria-label': 'index field', placeholder: 'field' });
    const addIndex = h('form', { onsubmit: (e) => { e.preventDefault(); change({ indexes: { [indexName.value]: { [indexField.value]: 1 } } }); } },
      indexName, indexField, h('button', { type: 'submit' }, 'Add index'));

    const card = h('section', { class: 'card', dataset: { className: name } },
      h('h3', {}, name),
      h('table', { class: 'fields' }, h('thead', {}, h('tr', {}, h('th', {}, 'column'), h('th', {}, 'type'), h('th', {}, ''), h('th', {}, 'default'), h('th', {}, ''))), h('tbody', {}, rows)),
      readOnly ? null : addColumn,
      h('details', {}, h('summary', {}, 'Indexes'), h('ul', {}, indexes), readOnly ? null : addIndex),
      h('details', {}, h('summary', {}, 'Class-level permissions and protected fields'), permissionsForm(schema, readOnly, change)),
      readOnly ? null : button('Delete class', () => {
        if (confirm(`Delete the class ${name}? It must be empty.`)) busy(card, cardStatus, async () => { await api.parse('DELETE', path); await load(); });
      }, { class: 'danger' }),
      cardStatus);
    return card;
  }

  const addClass = h('form', { class: 'add-class', onsubmit: (event) => {
    event.preventDefault();
    busy(list, status, async () => { await api.parse('POST', `/schemas/${encodeURIComponent(newClass.value)}`, { className: newClass.value }); newClass.value = ''; await load(); });
  } }, newClass, h('button', { type: 'submit', class: 'primary' }, 'Create class'));
  clear(root, h('h2', {}, 'Schema'), readOnly ? null : addClass, status, list);
  await load();
}

// The CLP as a form: per operation, public, authenticated users, and named users or roles; protected fields per scope.
function permissionsForm(schema, readOnly, change) {
  const clp = schema.classLevelPermissions ?? {};
  const rows = OPERATIONS.map((op) => {
    const rule = clp[op] ?? {};
    const everyone = h('input', { type: 'checkbox', 'aria-label': `${op} public`, checked: rule['*'] === true, disabled: readOnly });
    const authenticated = h('input', { type: 'checkbox', 'aria-label': `${op} authenticated`, checked: rule.requiresAuthentication === true, disabled: readOnly });
    const named = h('input', {
      type: 'text', 'aria-label': `${op} users and roles`, disabled: readOnly, placeholder: 'role:Admin, userId',
      value: Object.keys(rule).filter((k) => k !== '*' && k !== 'requiresAuthentication' && k !== 'pointerFields').join(', '),
    });
    return { op, rule, everyone, authenticated, named, row: h('tr', {}, h('td', {}, op), h('td', {}, everyone), h('td', {}, authenticated), h('td', {}, named)) };
  });
  // Protected fields: one row per scope (`*`, `authenticated`, `role:Name`, `userField:owner`, a user id) with the
  // fields it may not see.
  const scopes = h('tbody', {});
  const addScope = (scope, fields) => scopes.append(h('tr', { dataset: { scope } }, h('td', {}, scope),
    h('td', {}, h('input', { type: 'text', 'aria-label': `protected fields for ${scope}`, value: fields.join(', '), disabled: readOnly })),
    h('td', {}, readOnly ? '' : h('button', { type: 'button', 'aria-label': `remove ${scope}`, onclick: (e) => e.target.closest('tr').remove() }, '×'))));
  for (const [scope, fields] of Object.entries(clp.protectedFields ?? {})) addScope(scope, fields);
  const newScope = h('input', { type: 'text', 'aria-label': 'new protected-fields scope', placeholder: '*, authenticated, role:Name, userField:owner' });
  const save = () => {
    const next = { ...clp };
    for (const r of rows) {
      const rule = {};
      if (r.everyone.checked) rule['*'] = true;
      if (r.authenticated.checked) rule.requiresAuthentication = true;
      for (const name of r.named.value.split(',').map((s) => s.trim()).filter(Boolean)) rule[name] = true;
      if (r.rule.pointerFields) rule.pointerFields = r.rule.pointerFields;
      next[r.op] = rule;
    }
    next.protectedFields = {};
    for (const row of scopes.children) {
      next.protectedFields[row.dataset.scope] = row.querySelector('input').value.split(',').map((f) => f.trim()).filter(Boolean);
    }
    change({ classLevelPermissions: next });
  };
  return h('div', { class: 'clp' },
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'operation'), h('th', {}, 'public'), h('th', {}, 'signed in'), h('th', {}, 'users / roles'))),
      h('tbody', {}, rows.map((r) => r.row))),
    h('h4', {}, 'Protected fields'),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'who'), h('th', {}, 'fields they may not see (comma list)'), h('th', {}, ''))), scopes),
    readOnly ? null : h('div', { class: 'row' }, newScope, h('button', { type: 'button', onclick: () => {
      const scope = newScope.value.trim();
      if (scope && !scopes.querySelector(`tr[data-scope="${CSS.escape(scope)}"]`)) addScope(scope, []);
      newScope.value = '';
    } }, 'Add scope')),
    readOnly ? null : button('Save permissions', save, { class: 'primary' }));
}
