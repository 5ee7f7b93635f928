// A class's export (JSON lines or CSV of the objects the current filters match, streamed by the server through
// find's rules) and import (a JSON lines or CSV file checked against the schema and written in batches; the refused
// rows are listed with their line, code and error).
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: name, class: 'hidden-link' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function reportView(report) {
  const summary = `Imported ${report.imported} object${report.imported === 1 ? '' : 's'} in ${report.batches} batch${report.batches === 1 ? '' : 'es'}; ${report.refusedCount} row${report.refusedCount === 1 ? '' : 's'} refused.`;
  return h('div', { class: 'card report', role: 'status', 'aria-label': 'import report' },
    h('p', {}, summary),
    report.refused.length === 0 ? null : h('table', { class: 'data', 'aria-label': 'refused rows' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Line'), h('th', {}, 'Code'), h('th', {}, 'Error'))),
      h('tbody', {}, report.refused.map((r) => h('tr', { dataset: { line: r.line } }, h('td', {}, r.line), h('td', {}, r.code), h('td', {}, r.error))))));
}

// The export and import controls of `className`; `where()` is the current filters' query, `reload()` redraws the table.
export function transferControls(className, where, reload, status, reportBox) {
  const readOnly = api.current().readOnly;
  const format = h('select', { 'aria-label': 'export format' }, h('option', { value: 'jsonl' }, 'JSON lines'), h('option', { value: 'csv' }, 'CSV'));
  const exportButton = button('Export', () => busy(exportButton, status, async () => {
    const blob = await api.exportClass(className, format.value, where());
    download(blob, `${className}.${format.value}`);
  }));
  const exporting = h('span', { class: 'row' }, format, exportButton);
  if (readOnly) return [exporting];
  const file = h('input', { type: 'file', accept: '.jsonl,.json,.ndjson,.csv,text/csv', 'aria-label': 'file to import' });
  const importButton = button('Import', () => busy(importButton, status, async () => {
    const chosen = file.files[0];
    if (!chosen) throw { error: 'Choose a JSON lines or CSV file first.' };
    const kind = /\.csv$/i.test(chosen.name) || chosen.type === 'text/csv' ? 'csv' : 'jsonl';
    const report = await api.importClass(className, kind, chosen);
    clear(reportBox, reportView(report));
    file.value = '';
    await reload();
  }));
  return [exporting, h('span', { class: 'row' }, file, importButton)];
}
