// Users, roles and sessions: find a user, set a password or send a reset mail, revoke sessions; roles with their
// member users and member roles.
import { h, clear, button, busy } from './dom.js';
import * as api from './api.js';

const pointer = (className, objectId) => ({ __type: 'Pointer', className, objectId });

export async function usersView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const results = h('div', {});
  const query = h('input', { type: 'search', 'aria-label': 'find a user', placeholder: 'username, email or objectId' });

  async function find() {
    await busy(results, status, async () => {
      const text = query.value.trim();
      const where = text ? { $or: [{ username: { $regex: text, $options: 'i' } }, { email: { $regex: text, $options: 'i' } }, { objectId: text }] } : {};
      const users = (await api.parse('GET', '/users', { where, limit: 50, order: 'username' })).results;
      clear(results, users.length === 0 ? h('p', { class: 'empty' }, 'No users.') : users.map(userCard));
    });
  }

  function userCard(user) {
    const cardStatus = h('div', { class: 'status' });
    const sessions = h('ul', { class: 'sessions' });
    const password = h('input', { type: 'password', 'aria-label': `new password for ${user.username}`, autocomplete: 'new-password' });
    const card = h('section', { class: 'card', dataset: { userId: user.objectId } },
      h('h3', {}, user.username ?? user.objectId, ' ', h('small', {}, user.objectId)),
      user.email ? h('p', {}, user.email, user.emailVerified === false ? ' (not verified)' : '') : null,
      readOnly ? null : h('form', { onsubmit: (e) => {
        e.preventDefault();
        busy(card, cardStatus, async () => {
          await api.parse('PUT', `/users/${user.objectId}`, { password: password.value });
          password.value = '';
          clear(cardStatus, h('p', { class: 'note' }, 'Password changed; the user\'s sessions were revoked.'));
          await loadSessions();
        });
      } }, password, h('button', { type: 'submit' }, 'Set password')),
      readOnly || !user.email ? null : button('Send password reset mail', () => busy(card, cardStatus, async () => {
        await api.parse('POST', '/requestPasswordReset', { email: user.email });
        clear(cardStatus, h('p', { class: 'note' }, `Reset mail sent to ${user.email}.`));
      })),
      h('h4', {}, 'Sessions'), sessions, cardStatus);

    async function loadSessions() {
      const found = (await api.parse('GET', '/classes/_Session', { where: { user: pointer('_User', user.objectId) }, limit: 100 })).results;
      clear(sessions, found.length === 0 ? h('li', { class: 'empty' }, 'none') : found.map((s) => h('li', {},
        `${s.createdWith?.action ?? 'session'} ${s.installationId ?? ''} until ${s.expiresAt?.iso ?? '—'} `,
        readOnly ? null : button('Revoke', () => busy(card, cardStatus, async () => {
          await api.parse('DELETE', `/sessions/${s.objectId}`);
          await loadSessions();
        }), { class: 'danger' }))));
    }
    loadSessions().catch(() => {});
    return card;
  }

  clear(root, h('h2', {}, 'Users'),
    h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); find(); } }, query, h('button', { type: 'submit', class: 'primary' }, 'Find')),
    status, results);
  await find();
}

export async function rolesView(root) {
  const readOnly = api.current().readOnly;
  const status = h('div', { class: 'status' });
  const list = h('div', {});
  const name = h('input', { type: 'text', 'aria-label': 'new role name', placeholder: 'RoleName' });

  async function load() {
    await busy(list, status, async () => {
      const roles = (await api.parse('GET', '/roles', { order: 'name', limit: 1000 })).results;
      clear(list, roles.length === 0 ? h('p', { class: 'empty' }, 'No roles.') : roles.map((r) => roleCard(r, roles)));
    });
  }

  function roleCard(role, roles) {
    const cardStatus = h('div', { class: 'status' });
    const users = h('ul', {});
    const children = h('ul', {});
    const change = (key, op, objects) => busy(card, cardStatus, async () => {
      await api.parse('PUT', `/roles/${role.objectId}`, { [key]: { __op: op, objects } });
      await members();
    });
    const userId = h('input', { type: 'text', 'aria-label': `add a user to ${role.name}`, placeholder: 'user objectId' });
    const child = h('select', { 'aria-label': `add a member role to ${role.name}` },
      roles.filter((r) => r.objectId !== role.objectId).map((r) => h('option', { value: r.objectId }, r.name)));
    const card = h('section', { class: 'card', dataset: { role: role.name } },
      h('h3', {}, role.name),
      h('h4', {}, 'Users'), users,
      readOnly ? null : h('form', { class: 'row', onsubmit: (e) => {
        e.preventDefault();
        const id = userId.value.trim();
        userId.value = '';
        change('users', 'AddRelation', [pointer('_User', id)]);
      } },
        userId, h('button', { type: 'submit' }, 'Add user')),
      h('h4', {}, 'Member roles (they get this role)'), children,
      readOnly || roles.length < 2 ? null : h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); change('roles', 'AddRelation', [pointer('_Role', child.value)]); } },
        child, h('button', { type: 'submit' }, 'Add role')),
      cardStatus);

    async function members() {
      const related = (className, key) => api.parse('GET', `/classes/${className}`, {
        where: { $relatedTo: { object: pointer('_Role', role.objectId), key } }, limit: 1000,
      });
      const [u, r] = await Promise.all([related('_User', 'users'), related('_Role', 'roles')]);
      clear(users, u.results.map((x) => h('li', {}, `${x.username ?? ''} ${x.objectId} `,
        readOnly ? null : button('Remove', () => change('users', 'RemoveRelation', [pointer('_User', x.objectId)]), { class: 'danger' }))));
      clear(children, r.results.map((x) => h('li', {}, `${x.name} `,
        readOnly ? null : button('Remove', () => change('roles', 'RemoveRelation', [pointer('_Role', x.objectId)]), { class: 'danger' }))));
    }
    members().catch((e) => clear(cardStatus, String(e?.error ?? e)));
    return card;
  }

  clear(root, h('h2', {}, 'Roles'),
    readOnly ? null : h('form', { class: 'row', onsubmit: (e) => {
      e.preventDefault();
      busy(list, status, async () => { await api.parse('POST', '/roles', { name: name.value, ACL: { '*': { read: true } } }); name.value = ''; await load(); });
    } }, name, h('button', { type: 'submit', class: 'primary' }, 'Create role')),
    status, list);
  await load();
}
