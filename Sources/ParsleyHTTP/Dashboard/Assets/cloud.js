// Cloud code: run functions, jobs (run now, their status, schedules) and webhooks.
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';

function jsonInput(label, value = '{}') {
  const area = h('textarea', { rows: 4, class: 'json', 'aria-label': label });
  area.value = value;
  return {
    element: area,
    read: () => {
      try { return JSON.parse(area.value || '{}'); } catch (e) { throw { code: 107, error: `Invalid JSON: ${e.message}` }; }
    },
  };
}

export function functionsView(root) {
  const name = h('input', { type: 'text', 'aria-label': 'function name', placeholder: 'function name' });
  const params = jsonInput('parameters');
  const answer = h('pre', { class: 'answer', 'aria-label': 'result' });
  const status = h('div', { class: 'status' });
  clear(root, h('h2', {}, 'Cloud functions'),
    h('form', { onsubmit: (e) => {
      e.preventDefault();
      busy(answer, status, async () => {
        const r = await api.parse('POST', `/functions/${encodeURIComponent(name.value)}`, params.read());
        answer.textContent = JSON.stringify(r, null, 2);
      });
    } }, h('div', { class: 'row' }, name, h('button', { type: 'submit', class: 'primary' }, 'Run')), h('label', {}, 'Parameters (JSON)', params.element)),
    status, answer);
}

export async function jobsView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const body = h('div', {});
  async function load() {
    await busy(body, status, async () => {
      const [data, schedules, runs] = await Promise.all([
        api.parse('GET', '/cloud_code/jobs/data'),
        api.parse('GET', '/cloud_code/jobs'),
        api.parse('GET', '/classes/_JobStatus', { order: '-createdAt', limit: 20 }),
      ]);
      const params = jsonInput('job parameters');
      const jobName = h('select', { 'aria-label': 'job' }, (data.jobs ?? []).map((j) => h('option', { value: j }, j)));
      const when = h('input', { type: 'datetime-local', 'aria-label': 'first run (UTC)' });
      const repeat = h('input', { type: 'number', min: 0, 'aria-label': 'repeat every minutes', placeholder: 'repeat every (minutes)' });
      clear(body,
        (data.jobs ?? []).length === 0 ? h('p', { class: 'empty' }, 'No jobs are registered.') : null,
        readOnly || !(data.jobs ?? []).length ? null : h('form', { onsubmit: (e) => {
          e.preventDefault();
          busy(body, status, async () => { await api.parse('POST', `/jobs/${encodeURIComponent(jobName.value)}`, params.read()); await load(); });
        } }, h('div', { class: 'row' }, jobName, h('button', { type: 'submit', class: 'primary' }, 'Run now')), h('label', {}, 'Parameters (JSON)', params.element)),
        readOnly || !(data.jobs ?? []).length ? null : h('form', { class: 'row', onsubmit: (e) => {
          e.preventDefault();
          busy(body, status, async () => {
            const job = { jobName: jobName.value, description: `${jobName.value} (dashboard)`, params: JSON.stringify(params.read()),
              startAfter: when.value ? new Date(when.value + 'Z').toISOString() : new Date().toISOString(),
              repeatMinutes: Number(repeat.value || 0) };
            await api.parse('POST', '/cloud_code/jobs', { job_schedule: job });
            await load();
          });
        } }, 'Schedule: ', when, repeat, h('button', { type: 'submit' }, 'Add schedule')),
        h('h3', {}, 'Schedules'),
        h('table', { class: 'data' }, h('tbody', {}, (schedules ?? []).map((s) => h('tr', {},
          h('td', {}, s.jobName), h('td', {}, s.startAfter ?? ''), h('td', {}, s.repeatMinutes ? `every ${s.repeatMinutes} min` : 'once'),
          h('td', {}, s.lastRun ? `last run ${s.lastRun}` : ''),
          h('td', {}, readOnly ? '' : button('Delete', () => busy(body, status, async () => { await api.parse('DELETE', `/cloud_code/jobs/${s.objectId}`); await load(); }), { class: 'danger' })))))),
        h('h3', {}, 'Recent runs'),
        h('table', { class: 'data' }, h('tbody', {}, runs.results.map((r) => h('tr', { dataset: { jobStatus: r.objectId } },
          h('td', {}, r.jobName), h('td', {}, r.status), h('td', {}, r.message ?? ''), h('td', {}, r.createdAt))))));
    });
  }
  clear(root, h('h2', {}, 'Jobs'), button('Refresh', () => load()), status, body);
  await load();
}

export async function webhooksView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const body = h('div', {});
  async function load() {
    await busy(body, status, async () => {
      const [functions, triggers] = await Promise.all([api.parse('GET', '/hooks/functions'), api.parse('GET', '/hooks/triggers')]);
      const row = (label, url, remove) => h('tr', {}, h('td', {}, label), h('td', {}, url), h('td', {}, readOnly ? '' : button('Delete', remove, { class: 'danger' })));
      clear(body, h('table', { class: 'data' }, h('tbody', {},
        functions.map((f) => row(`function ${f.functionName}`, f.url, () => busy(body, status, async () => {
          await api.parse('PUT', `/hooks/functions/${encodeURIComponent(f.functionName)}`, { __op: 'Delete' }); await load();
        }))),
        triggers.map((t) => row(`${t.triggerName} ${t.className}`, t.url, () => busy(body, status, async () => {
          await api.parse('PUT', `/hooks/triggers/${encodeURIComponent(t.className)}/${t.triggerName}`, { __op: 'Delete' }); await load();
        }))))));
    });
  }
  const kind = h('select', { 'aria-label': 'webhook kind' }, ['function', 'beforeSave', 'afterSave', 'beforeDelete', 'afterDelete', 'beforeFind', 'afterFind'].map((k) => h('option', { value: k }, k)));
  const name = h('input', { type: 'text', 'aria-label': 'function or class name', placeholder: 'function name / class name' });
  const url = h('input', { type: 'url', 'aria-label': 'webhook URL', placeholder: 'https://example.com/hook' });
  const add = h('form', { class: 'row', onsubmit: (e) => {
    e.preventDefault();
    busy(body, status, async () => {
      if (kind.value === 'function') await api.parse('POST', '/hooks/functions', { functionName: name.value, url: url.value });
      else await api.parse('POST', '/hooks/triggers', { className: name.value, triggerName: kind.value, url: url.value });
      await load();
    });
  } }, kind, name, url, h('button', { type: 'submit', class: 'primary' }, 'Add webhook'));
  clear(root, h('h2', {}, 'Webhooks'), readOnly ? null : add, status, body);
  await load();
}
