// GraphQL console: an operation and its variables sent to the server's GraphQL API with the dashboard's credentials
// (the master key's rights, or the read-only key's), and the answer as the server sent it.
import { h, clear, busy } from './dom.js';
import * as api from './api.js';

const example = `query Classes {
  health
}`;

export function graphqlView(root) {
  if (!api.current().graphQLPath) {
    clear(root, h('h2', {}, 'GraphQL'), h('p', { class: 'note' }, 'The GraphQL API is not mounted (mountGraphQL).'));
    return;
  }
  const query = h('textarea', { rows: 12, class: 'json', 'aria-label': 'query', spellcheck: 'false' });
  query.value = example;
  const variables = h('textarea', { rows: 4, class: 'json', 'aria-label': 'variables', placeholder: '{"name": "value"}' });
  const answer = h('pre', { class: 'answer', 'aria-label': 'answer' });
  const status = h('div', { class: 'status' });
  const form = h('form', { class: 'graphql', onsubmit: (e) => {
    e.preventDefault();
    busy(answer, status, async () => {
      let vars;
      if (variables.value.trim()) {
        try { vars = JSON.parse(variables.value); } catch { answer.textContent = 'Variables are not JSON.'; return; }
      }
      const r = await api.graphql(query.value, vars);
      let text = r.text;
      try { text = JSON.stringify(JSON.parse(r.text), null, 2); } catch { /* shown as it came */ }
      answer.textContent = `${r.status}\n${text}`;
    });
  } },
  h('div', { class: 'row' }, h('span', {}, api.current().graphQLPath), h('button', { type: 'submit', class: 'primary' }, 'Run')),
  h('label', {}, 'Operation'), query, h('label', {}, 'Variables'), variables);
  clear(root, h('h2', {}, 'GraphQL'), form, status, answer);
}
