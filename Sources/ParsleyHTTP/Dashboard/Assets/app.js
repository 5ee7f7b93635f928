// The dashboard's shell: sign-in, navigation and the views, routed by the URL's hash (#/browser/Post, #/schema ...).
import { h, clear, button, busy, errorBox } from './dom.js';
import * as api from './api.js';
import { classList, classView } from './browser.js';
import { schemaView } from './schema.js';
import { configView } from './config.js';
import { consoleView } from './console.js';
import { graphqlView } from './graphql.js';
import { usersView, rolesView } from './people.js';
import { functionsView, jobsView, webhooksView } from './cloud.js';
import { pushView } from './push.js';
import { logsView } from './logs.js';
import { healthView } from './health.js';

const app = document.getElementById('app');

function signInView() {
  const status = h('div', { class: 'status' });
  const key = h('input', { type: 'password', id: 'master-key', autocomplete: 'current-password', 'aria-label': 'master key', required: true });
  const username = h('input', { type: 'text', id: 'username', autocomplete: 'username', 'aria-label': 'username' });
  const password = h('input', { type: 'password', id: 'password', autocomplete: 'current-password', 'aria-label': 'password' });
  const form = h('form', { class: 'signin', onsubmit: (event) => {
    event.preventDefault();
    busy(form, status, async () => { await api.signIn({ masterKey: key.value }); route(); });
  } },
  h('h1', {}, 'Parsley'),
  h('label', { for: 'master-key' }, 'Master key (or read-only master key)'), key,
  h('button', { type: 'submit', class: 'primary' }, 'Sign in'));
  const userForm = h('form', { class: 'signin', onsubmit: (event) => {
    event.preventDefault();
    busy(userForm, status, async () => { await api.signIn({ username: username.value, password: password.value }); route(); });
  } },
  h('p', {}, 'or as a member of the admin role'),
  h('label', { for: 'username' }, 'Username'), username, h('label', { for: 'password' }, 'Password'), password,
  h('button', { type: 'submit' }, 'Sign in as user'));
  clear(app, h('main', { class: 'center' }, form, userForm, status));
  key.focus();
}

function shell() {
  const session = api.current();
  const nav = h('nav', { class: 'side', 'aria-label': 'classes' });
  const main = h('main', { class: 'content' });
  const links = [
    ['#/browser', 'Browser'], ['#/schema', 'Schema'], ['#/users', 'Users'], ['#/roles', 'Roles'], ['#/config', 'Config'],
    ['#/functions', 'Functions'], ['#/jobs', 'Jobs'], ['#/webhooks', 'Webhooks'], ['#/push', 'Push'], ['#/logs', 'Logs'],
    ['#/health', 'Health'], ['#/console', 'API console'],
    ...(session.graphQLPath ? [['#/graphql', 'GraphQL']] : []),
  ];
  const header = h('header', {},
    h('strong', {}, 'Parsley'), h('span', { class: 'app-id' }, session.applicationId),
    session.readOnly ? h('span', { class: 'badge' }, 'read-only') : null,
    h('span', { class: 'links' }, links.map(([href, label]) => h('a', { href }, label))),
    button('Sign out', async () => { await api.signOut(); location.hash = ''; route(); }));
  clear(app, header, h('div', { class: 'layout' }, nav, main));
  return { nav, main };
}

async function route() {
  let session = api.current();
  if (!session) {
    try { session = await api.restore(); } catch (error) { clear(app, errorBox(error)); return; }
  }
  if (!session) return signInView();
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?');
  const params = Object.fromEntries(new URLSearchParams(query ?? ''));
  const [view, ...rest] = path.split('/');
  const { nav, main } = shell();
  try {
    switch (view) {
      case 'schema': nav.remove(); await schemaView(main); break;
      case 'config': nav.remove(); await configView(main); break;
      case 'console': nav.remove(); consoleView(main); break;
      case 'graphql': nav.remove(); graphqlView(main); break;
      case 'users': nav.remove(); await usersView(main); break;
      case 'roles': nav.remove(); await rolesView(main); break;
      case 'functions': nav.remove(); functionsView(main); break;
      case 'jobs': nav.remove(); await jobsView(main); break;
      case 'webhooks': nav.remove(); await webhooksView(main); break;
      case 'push': nav.remove(); await pushView(main); break;
      case 'logs': nav.remove(); await logsView(main, params); break;
      case 'health': nav.remove(); await healthView(main); break;
      default: {
        const wanted = decodeURIComponent(rest[0] ?? '');
        const schemas = await classList(nav, wanted || undefined);
        const className = wanted || schemas[0]?.className;
        const schema = schemas.find((s) => s.className === className);
        if (schema) classView(main, className, schema, params); else clear(main, h('p', {}, 'No classes yet: create one under Schema.'));
      }
    }
  } catch (error) {
    if (error?.status === 401 || error?.status === 403) { await api.signOut().catch(() => {}); return signInView(); }
    clear(main, errorBox(error));
  }
}

window.addEventListener('hashchange', route);
route();
