// Building DOM safely: every value becomes a text node or an attribute, never HTML. Links only to http(s) or
// same-origin paths, so a stored `javascript:` URL is shown, never followed.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === 'href' || key === 'src') {
      el.setAttribute(key, safeURL(value));
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (value === true) {
      el.setAttribute(key, '');
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function safeURL(value) {
  const text = String(value);
  if (text.startsWith('/') && !text.startsWith('//')) return text;
  if (text.startsWith('#')) return text;
  try {
    const url = new URL(text, location.origin);
    if (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'blob:') return url.href;
  } catch { /* not a URL */ }
  return '#';
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A Parse error (or any failure) as a visible message: `code: message`.
export function errorBox(error) {
  const code = error?.code !== undefined ? `${error.code}: ` : '';
  return h('p', { class: 'error', role: 'alert' }, code + (error?.error ?? error?.message ?? String(error)));
}

export function button(label, onclick, attrs = {}) {
  return h('button', { type: 'button', ...attrs, onclick }, label);
}

// Runs `action`, showing a busy state on `target` and any error in `status`.
export async function busy(target, status, action) {
  target?.setAttribute('aria-busy', 'true');
  if (status) clear(status);
  try {
    return await action();
  } catch (error) {
    if (status) clear(status, errorBox(error)); else throw error;
  } finally {
    target?.removeAttribute('aria-busy');
  }
}
