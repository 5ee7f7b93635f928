// Parse values shown in cells and edited with an editor fitting their type. Everything renders as text.
import { h } from './dom.js';

export const TYPES = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'Pointer', 'Relation', 'File', 'GeoPoint', 'Polygon', 'Bytes', 'ACL'];

// A short text for a table cell.
export function display(value, type) {
  if (value === undefined || value === null) return '';
  switch (type) {
    case 'Date': return value.iso ?? String(value);
    case 'Pointer': return value.objectId ?? '';
    case 'Relation': return `${value.className ?? ''} relation`;
    case 'File': return value.name ?? '';
    case 'GeoPoint': return `${value.latitude}, ${value.longitude}`;
    case 'Boolean': return value ? 'true' : 'false';
    case 'String': case 'Number': return String(value);
    default: return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

// An ISO date as the value of `<input type=datetime-local>` (UTC, to the millisecond) and back.
export function toLocalInput(iso) { return iso ? iso.replace(/Z$/, '') : ''; }
export function fromLocalInput(text) {
  if (!text) return null;
  const date = new Date(text.endsWith('Z') ? text : text + 'Z');
  if (Number.isNaN(date.getTime())) throw { code: 111, error: `Not a date: ${text}` };
  return { __type: 'Date', iso: date.toISOString() };
}

// The editor of one value: an element and `read()` that gives the Parse value to store (or throws a Parse-like error).
export function editor(type, value, field = {}) {
  switch (type) {
    case 'Boolean': {
      const input = h('input', { type: 'checkbox', 'aria-label': 'value' });
      input.checked = value === true;
      return { element: input, read: () => input.checked };
    }
    case 'Number': {
      const input = h('input', { type: 'number', step: 'any', value: value ?? '', 'aria-label': 'value' });
      return { element: input, read: () => (input.value === '' ? null : Number(input.value)) };
    }
    case 'Date': {
      const input = h('input', { type: 'datetime-local', step: '0.001', value: toLocalInput(value?.iso), 'aria-label': 'date (UTC)' });
      return { element: h('span', {}, input, h('small', {}, ' UTC')), read: () => fromLocalInput(input.value) };
    }
    case 'Pointer': {
      const input = h('input', { type: 'text', value: value?.objectId ?? '', placeholder: `${field.targetClass ?? ''} objectId`, 'aria-label': 'objectId' });
      return {
        element: input,
        read: () => (input.value ? { __type: 'Pointer', className: field.targetClass ?? value?.className, objectId: input.value.trim() } : null),
      };
    }
    case 'GeoPoint': {
      const lat = h('input', { type: 'number', step: 'any', value: value?.latitude ?? '', 'aria-label': 'latitude', placeholder: 'latitude' });
      const lng = h('input', { type: 'number', step: 'any', value: value?.longitude ?? '', 'aria-label': 'longitude', placeholder: 'longitude' });
      return {
        element: h('span', { class: 'pair' }, lat, lng),
        read: () => (lat.value === '' ? null : { __type: 'GeoPoint', latitude: Number(lat.value), longitude: Number(lng.value) }),
      };
    }
    case 'ACL': return aclEditor(value);
    case 'String': {
      const area = h('textarea', { rows: 3, 'aria-label': 'text' });
      area.value = value ?? '';
      return { element: area, read: () => area.value };
    }
    default: {
      // Objects, arrays, ACLs, polygons, bytes and anything else: validated JSON.
      const area = h('textarea', { rows: 6, class: 'json', 'aria-label': 'JSON' });
      area.value = value === undefined || value === null ? '' : JSON.stringify(value, null, 2);
      return {
        element: area,
        read: () => {
          if (area.value.trim() === '') return null;
          try { return JSON.parse(area.value); } catch (e) { throw { code: 107, error: `Invalid JSON: ${e.message}` }; }
        },
      };
    }
  }
}

// A value typed into a filter, as the field's type wants it.
export function filterValue(type, text) {
  switch (type) {
    case 'Number': return Number(text);
    case 'Boolean': return text === 'true';
    case 'Date': return fromLocalInput(text);
    case 'Pointer': return text;
    default: return text;
  }
}

// An ACL as a table: one row per principal (public `*`, a user's objectId, `role:Name`) with read and write boxes.
function aclEditor(value) {
  const rows = h('tbody', {});
  const add = (principal, rights = {}) => {
    const read = h('input', { type: 'checkbox', 'aria-label': `${principal} read`, checked: rights.read === true });
    const write = h('input', { type: 'checkbox', 'aria-label': `${principal} write`, checked: rights.write === true });
    const row = h('tr', { dataset: { principal } }, h('td', {}, principal === '*' ? 'public (*)' : principal), h('td', {}, read), h('td', {}, write),
      h('td', {}, h('button', { type: 'button', onclick: () => row.remove(), 'aria-label': `remove ${principal}` }, '×')));
    rows.append(row);
  };
  for (const [principal, rights] of Object.entries(value ?? {})) add(principal, rights);
  const principal = h('input', { type: 'text', 'aria-label': 'user objectId or role:Name', placeholder: 'user objectId, role:Name or *' });
  const element = h('div', { class: 'acl' },
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'who'), h('th', {}, 'read'), h('th', {}, 'write'), h('th', {}, ''))), rows),
    h('div', { class: 'row' }, principal, h('button', { type: 'button', onclick: () => {
      const name = principal.value.trim();
      if (name && !rows.querySelector(`tr[data-principal="${CSS.escape(name)}"]`)) add(name, { read: true });
      principal.value = '';
    } }, 'Add')));
  return {
    element,
    read: () => {
      const acl = {};
      for (const row of rows.children) {
        const [read, write] = row.querySelectorAll('input');
        const rights = {};
        if (read.checked) rights.read = true;
        if (write.checked) rights.write = true;
        if (Object.keys(rights).length) acl[row.dataset.principal] = rights;
      }
      return acl;
    },
  };
}
