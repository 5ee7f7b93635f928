// The dashboard's only way to the server: the ordinary Parse REST API with the session cookie and its CSRF token
// (kept in memory, never in localStorage), plus the dashboard's own sign-in endpoints.

let session = null;

export function current() { return session; }

async function json(response) {
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = { error: text || response.statusText }; }
  if (!response.ok) throw body && typeof body === 'object' ? { code: body.code, error: body.error ?? response.statusText, status: response.status } : { error: response.statusText };
  return body;
}

export async function restore() {
  const response = await fetch('/dashboard/api/session', { credentials: 'same-origin' });
  if (response.status === 401) return null;
  session = await json(response);
  return session;
}

export async function signIn(credentials) {
  const response = await fetch('/dashboard/api/login', {
    method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(credentials),
  });
  session = await json(response);
  return session;
}

export async function signOut() {
  if (!session) return;
  await fetch('/dashboard/api/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-Parsley-Dashboard-CSRF': session.csrfToken } });
  session = null;
}

function headers(extra = {}) {
  return {
    'X-Parse-Application-Id': session.applicationId,
    'X-Parsley-Dashboard-CSRF': session.csrfToken,
    ...extra,
  };
}

// `parse('GET', '/classes/Post', {where: {...}, limit: 20})` or `parse('PUT', '/classes/Post/id', body)`.
export async function parse(method, path, data) {
  let url = session.mountPath + path;
  const init = { method, credentials: 'same-origin', headers: headers() };
  if (method === 'GET' && data) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(data)) {
      if (value === undefined) continue;
      params.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    url += '?' + params.toString();
  } else if (data !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(data);
  }
  return json(await fetch(url, init));
}

// Uploads a file; answers Parse's `{name, url}`.
export async function upload(file) {
  const response = await fetch(`${session.mountPath}/files/${encodeURIComponent(file.name)}`, {
    method: 'POST', credentials: 'same-origin', headers: headers({ 'Content-Type': file.type || 'application/octet-stream' }), body: file,
  });
  return json(response);
}

// Any request, as the API console sends it: the answer's status and text.
export async function raw(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: headers() };
  if (body && method !== 'GET') {
    init.headers['Content-Type'] = 'application/json';
    init.body = body;
  }
  const response = await fetch(session.mountPath + path, init);
  return { status: response.status, text: await response.text() };
}

// A GraphQL operation at the server's graphQLPath, with the dashboard's credentials: the answer's status and text.
export async function graphql(query, variables) {
  const body = { query };
  if (variables !== undefined) body.variables = variables;
  const response = await fetch(session.graphQLPath, {
    method: 'POST', credentials: 'same-origin', headers: headers({ 'Content-Type': 'application/json' }), body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

// This server process's version, database, request counts and LiveQuery figures.
export async function health() {
  const response = await fetch('/dashboard/api/health', { credentials: 'same-origin', headers: { 'X-Parsley-Dashboard-CSRF': session.csrfToken } });
  return json(response);
}

// The dashboard's own endpoints (same-origin, CSRF token in a header): `/dashboard/api/...` with query `params`.
function query(params) {
  const parts = Object.entries(params ?? {}).filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

async function dashboard(method, path, params, body) {
  const init = { method, credentials: 'same-origin', headers: { 'X-Parsley-Dashboard-CSRF': session.csrfToken } };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/octet-stream';
    init.body = body;
  }
  return fetch(`/dashboard/api${path}${query(params)}`, init);
}

// Per-second figures of this process: the last hour (range 'hour') or since the start ('all'), as columns; with
// `since` (seconds), only the later points.
export async function metrics(range, since) { return json(await dashboard('GET', '/metrics', { range, since })); }

// Log lines as table rows ({results, latest}); `params` filter them (level, status, method, path, requestId, user,
// text, minMs, from, until, after, sort, limit).
export async function logs(params) { return json(await dashboard('GET', '/logs', params)); }

// A class as JSON lines or CSV (`where` as find takes it): a Blob to download.
export async function exportClass(className, format, where) {
  const response = await dashboard('GET', `/classes/${encodeURIComponent(className)}/export`, { format, where });
  if (!response.ok) await json(response);
  return response.blob();
}

// A JSON lines or CSV file into a class: the report {imported, batches, refusedCount, refused: [{line, code, error}]}.
export async function importClass(className, format, file) {
  return json(await dashboard('POST', `/classes/${encodeURIComponent(className)}/import`, { format }, file));
}
