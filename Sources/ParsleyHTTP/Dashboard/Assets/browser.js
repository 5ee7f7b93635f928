// The data browser: classes with their counts, a paged table of one class (keyset paging: each page continues after
// the last row of the one before, so big classes cost no OFFSET), sorting, filters, type-aware editors, add,
// duplicate and delete, export and import (transfer.js).
import { h, clear, button, busy, errorBox } from './dom.js';
import * as api from './api.js';
import { display, editor, filterValue } from './values.js';
import { transferControls } from './transfer.js';

const PAGE = 50;
const BUILTIN = { objectId: 'String', createdAt: 'Date', updatedAt: 'Date', ACL: 'ACL' };
const OPERATORS = [
  ['eq', 'equals'], ['ne', 'is not'], ['lt', '<'], ['lte', '≤'], ['gt', '>'], ['gte', '≥'],
  ['contains', 'contains'], ['regex', 'matches regex'], ['in', 'is one of (comma list)'], ['exists', 'exists'], ['missing', 'does not exist'],
];

// The app's classes first, then Parse's own (_User, _Role ...).
function byName(a, b) {
  const system = (name) => (name.startsWith('_') ? 1 : 0);
  return system(a.className) - system(b.className) || a.className.localeCompare(b.className);
}

export async function classList(nav, current) {
  const schemas = (await api.parse('GET', '/schemas')).results;
  schemas.sort(byName);
  const items = schemas.map((schema) => {
    const count = h('span', { class: 'count', dataset: { countOf: schema.className } }, '…');
    api.parse('GET', `/classes/${encodeURIComponent(schema.className)}`, { count: 1, limit: 0 })
      .then((r) => { count.textContent = r.count.toLocaleString(); })
      .catch(() => { count.textContent = '?'; });
    const here = schema.className === (current ?? schemas[0]?.className);
    return h('li', {}, h('a', { href: `#/browser/${encodeURIComponent(schema.className)}`, 'aria-current': here ? 'page' : false }, schema.className), ' ', count);
  });
  clear(nav, h('h2', {}, 'Classes'), h('ul', { class: 'classes' }, items));
  return schemas;
}

function escapeRegex(text) { return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'); }

// One filter chip as a `where` fragment.
function condition(filter, type, field) {
  const value = ['exists', 'missing'].includes(filter.op) ? null
    : type === 'Pointer' ? { __type: 'Pointer', className: field?.targetClass, objectId: filter.value }
      : filterValue(type, filter.value);
  switch (filter.op) {
    case 'eq': return value;
    case 'ne': return { $ne: value };
    case 'lt': case 'lte': case 'gt': case 'gte': return { [`$${filter.op}`]: value };
    case 'contains': return { $regex: escapeRegex(filter.value), $options: 'i' };
    case 'regex': return { $regex: filter.value };
    case 'in': return { $in: filter.value.split(',').map((v) => filterValue(type, v.trim())) };
    case 'exists': return { $exists: true };
    case 'missing': return { $exists: false };
    default: return value;
  }
}

export function classView(root, className, schema, params) {
  const readOnly = api.current().readOnly;
  const fields = { ...Object.fromEntries(Object.entries(BUILTIN).map(([k, t]) => [k, { type: t }])), ...schema.fields };
  const columns = Object.keys(fields).filter((f) => f !== 'authData');
  const state = {
    sort: { field: 'createdAt', descending: true },
    filters: params.id ? [{ field: 'objectId', op: 'eq', value: params.id }] : [],
    relatedTo: params.relatedTo ? JSON.parse(params.relatedTo) : null,
    cursors: [],     // where each earlier page started
    cursor: null,    // where this page starts (null: the first page)
    rows: [],
    selected: new Set(),
  };
  const status = h('div', { class: 'status' });
  const table = h('div', { class: 'table-wrap' });
  const whereView = h('pre', { class: 'where', 'aria-label': 'where' });
  const chips = h('div', { class: 'chips' });
  const total = h('span', { class: 'total' });
  const pager = h('div', { class: 'pager' });

  function where(cursor) {
    const parts = state.filters.map((f) => ({ [f.field]: condition(f, fields[f.field]?.type, fields[f.field]) }));
    if (state.relatedTo) parts.push({ $relatedTo: state.relatedTo });
    if (cursor) {
      const { field, descending } = state.sort;
      const op = descending ? '$lt' : '$gt';
      parts.push({ $or: [{ [field]: { [op]: cursor.value } }, { [field]: cursor.value, objectId: { [op]: cursor.id } }] });
    }
    return parts.length === 0 ? {} : parts.length === 1 ? parts[0] : { $and: parts };
  }

  async function load() {
    const { field, descending } = state.sort;
    const order = `${descending ? '-' : ''}${field},${descending ? '-' : ''}objectId`;
    await busy(table, status, async () => {
      const [page, counted] = await Promise.all([
        api.parse('GET', `/classes/${encodeURIComponent(className)}`, { where: where(state.cursor), order, limit: PAGE }),
        api.parse('GET', `/classes/${encodeURIComponent(className)}`, { where: where(null), count: 1, limit: 0 }),
      ]);
      state.rows = page.results;
      state.selected.clear();
      total.textContent = `${counted.count.toLocaleString()} object${counted.count === 1 ? '' : 's'}`;
      if (state.filters.length === 0 && !state.relatedTo) {
        const side = [...document.querySelectorAll('nav.side .count')].find((el) => el.dataset.countOf === className);
        if (side) side.textContent = counted.count.toLocaleString();
      }
      renderChips();
      renderTable();
      renderPager();
    });
  }

  function renderChips() {
    clear(chips, state.filters.map((f, i) => h('span', { class: 'chip' },
      `${f.field} ${OPERATORS.find(([op]) => op === f.op)?.[1] ?? f.op} ${f.value ?? ''}`,
      button('×', () => { state.filters.splice(i, 1); restart(); }, { 'aria-label': `remove filter on ${f.field}`, class: 'link' }))));
    whereView.textContent = JSON.stringify(where(null));
  }

  function renderPager() {
    const last = state.rows[state.rows.length - 1];
    const next = button('Next ›', () => {
      state.cursors.push(state.cursor);
      state.cursor = { value: last[state.sort.field], id: last.objectId };
      load();
    }, { disabled: state.rows.length < PAGE || last?.[state.sort.field] === undefined });
    const previous = button('‹ Previous', () => { state.cursor = state.cursors.pop() ?? null; load(); }, { disabled: state.cursors.length === 0 });
    clear(pager, previous, next);
  }

  function restart() { state.cursor = null; state.cursors = []; load(); }

  function cell(row, column) {
    const type = fields[column]?.type;
    const value = row[column];
    let content = display(value, type);
    if (type === 'Pointer' && value?.objectId) {
      content = h('a', { href: `#/browser/${encodeURIComponent(value.className)}?id=${encodeURIComponent(value.objectId)}` }, value.objectId);
    } else if (type === 'Relation') {
      const related = { object: { __type: 'Pointer', className, objectId: row.objectId }, key: column };
      content = h('a', { href: `#/browser/${encodeURIComponent(fields[column].targetClass)}?relatedTo=${encodeURIComponent(JSON.stringify(related))}` }, 'view related');
    } else if (type === 'File' && value?.url) {
      content = h('a', { href: value.url, target: '_blank', rel: 'noopener noreferrer' }, value.name);
    }
    const editable = !readOnly && !['objectId', 'createdAt', 'updatedAt'].includes(column) && type !== 'Relation';
    return h('td', {
      tabindex: 0, dataset: { column },
      onkeydown: (event) => { if (event.key === 'Enter' && editable) edit(row, column); },
      ondblclick: () => { if (editable) edit(row, column); },
    }, content);
  }

  function renderTable() {
    const head = h('tr', {},
      h('th', {}, readOnly ? '' : h('input', { type: 'checkbox', 'aria-label': 'select all', onchange: (e) => {
        state.selected = e.target.checked ? new Set(state.rows.map((r) => r.objectId)) : new Set();
        renderTable();
      } })),
      readOnly ? null : h('th', {}, ''),
      columns.map((column) => {
        const sorted = state.sort.field === column;
        return h('th', { 'aria-sort': sorted ? (state.sort.descending ? 'descending' : 'ascending') : 'none' },
          button(`${column}${sorted ? (state.sort.descending ? ' ▼' : ' ▲') : ''}`, () => {
            state.sort = { field: column, descending: sorted ? !state.sort.descending : false };
            restart();
          }, { class: 'link' }),
          h('small', { class: 'type' }, fields[column]?.type ?? ''));
      }),
      null);
    const body = state.rows.map((row) => h('tr', { dataset: { id: row.objectId } },
      h('td', {}, readOnly ? '' : h('input', {
        type: 'checkbox', 'aria-label': `select ${row.objectId}`, checked: state.selected.has(row.objectId),
        onchange: (e) => { if (e.target.checked) state.selected.add(row.objectId); else state.selected.delete(row.objectId); },
      })),
      readOnly ? null : h('td', { class: 'actions' },
        button('Duplicate', () => duplicate(row)),
        button('Delete', () => remove([row.objectId]), { class: 'danger' })),
      columns.map((column) => cell(row, column))));
    clear(table, h('table', { class: 'data', role: 'grid' }, h('thead', {}, head), h('tbody', {}, body)),
      state.rows.length === 0 ? h('p', { class: 'empty' }, 'No objects.') : null);
  }

  // Arrow keys move between cells.
  table.addEventListener('keydown', (event) => {
    const td = event.target.closest?.('td');
    if (!td) return;
    const moves = { ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] };
    const move = moves[event.key];
    if (!move) return;
    const tr = td.parentElement;
    const rows = [...tr.parentElement.children];
    const r = rows.indexOf(tr) + move[0];
    const c = [...tr.children].indexOf(td) + move[1];
    const target = rows[r]?.children[c];
    if (target?.tabIndex === 0) { event.preventDefault(); target.focus(); }
  });

  async function save(objectId, body) {
    await api.parse('PUT', `/classes/${encodeURIComponent(className)}/${objectId}`, body);
  }

  function edit(row, column) {
    const type = fields[column]?.type;
    const dialog = h('dialog', { class: 'editor', 'aria-label': `edit ${column}` });
    const field = fields[column] ?? {};
    const ed = editor(type, row[column], field);
    const problem = h('div', {});
    const extra = [];
    if (type === 'File') {
      const file = h('input', { type: 'file', 'aria-label': 'upload a file' });
      extra.push(file);
      if (row[column]?.url && /\.(png|jpe?g|gif|webp)$/i.test(row[column].name ?? '')) {
        extra.push(h('img', { src: row[column].url, alt: row[column].name, class: 'preview' }));
      }
      ed.read = async () => {
        if (!file.files[0]) return row[column] ?? null;
        const uploaded = await api.upload(file.files[0]);
        return { __type: 'File', name: uploaded.name, url: uploaded.url };
      };
    }
    const close = () => dialog.close();
    dialog.addEventListener('close', () => dialog.remove());
    dialog.append(
      h('h3', {}, `${className}.${column}`, h('small', {}, ` ${type ?? ''}`)),
      type === 'File' ? null : ed.element, ...extra, problem,
      h('div', { class: 'buttons' },
        button('Save', () => busy(dialog, problem, async () => {
          const value = await ed.read();
          await save(row.objectId, { [column]: value === null ? { __op: 'Delete' } : value });
          close();
          await load();
        }), { class: 'primary' }),
        button('Cancel', close)));
    document.body.append(dialog);
    dialog.showModal();
    dialog.querySelector('input, textarea')?.focus();
  }

  async function duplicate(row) {
    const copy = {};
    for (const [key, value] of Object.entries(row)) {
      if (['objectId', 'createdAt', 'updatedAt'].includes(key) || fields[key]?.type === 'Relation') continue;
      copy[key] = value;
    }
    await busy(table, status, async () => { await api.parse('POST', `/classes/${encodeURIComponent(className)}`, copy); await load(); });
  }

  async function remove(ids) {
    if (ids.length === 0 || !confirm(`Delete ${ids.length} object${ids.length === 1 ? '' : 's'} of ${className}? This cannot be undone.`)) return;
    await busy(table, status, async () => {
      const requests = ids.map((id) => ({ method: 'DELETE', path: `${api.current().mountPath}/classes/${className}/${id}` }));
      const answers = await api.parse('POST', '/batch', { requests });
      const failed = answers.filter((a) => a.error);
      await load();
      if (failed.length) clear(status, errorBox(failed[0].error));
    });
  }

  // The filter form.
  const fieldSelect = h('select', { 'aria-label': 'filter field' }, columns.map((c) => h('option', { value: c }, c)));
  const opSelect = h('select', { 'aria-label': 'filter operator' }, OPERATORS.map(([op, label]) => h('option', { value: op }, label)));
  const valueInput = h('input', { type: 'text', 'aria-label': 'filter value', placeholder: 'value (dates: 2024-01-31T12:00)' });
  const filterForm = h('form', { class: 'filter', onsubmit: (event) => {
    event.preventDefault();
    state.filters.push({ field: fieldSelect.value, op: opSelect.value, value: valueInput.value });
    valueInput.value = '';
    restart();
  } }, fieldSelect, opSelect, valueInput, h('button', { type: 'submit' }, 'Add filter'));

  const toolbar = h('div', { class: 'toolbar' },
    h('h2', {}, className), total,
    readOnly ? null : button('Add row', () => busy(table, status, async () => {
      await api.parse('POST', `/classes/${encodeURIComponent(className)}`, {});
      restart();
    }), { class: 'primary' }),
    readOnly ? null : button('Delete selected', () => remove([...state.selected]), { class: 'danger' }),
    button('Refresh', () => load()));
  const report = h('div', {});
  const transfer = h('div', { class: 'toolbar transfer' }, transferControls(className, () => where(null), () => load(), status, report));
  clear(root, toolbar, transfer, filterForm, chips, h('details', {}, h('summary', {}, 'where'), whereView), status, report, table, pager);
  load();
}
