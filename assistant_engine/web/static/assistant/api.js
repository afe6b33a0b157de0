// Talking to the server: the REST API (JSON) and the page's HTML fragments.
// Text from the model or a tool is only ever put in the page with textContent;
// HTML comes only from this server's fragments, escaped and sanitized there.

import { gettext, interpolate } from './i18n.js';

// What the server says about this page (templatetags/assistant.py renders it,
// once, with {% url %}): where the engine is served (`base`, its pages' root;
// `api`, its API's root), the CSRF token and the person's organization. Every
// path is built from these roots, so the engine works at whatever prefix the
// product includes it ("/helper/"), never assuming the site's root.
let pageConfig;
function config() {
  if (pageConfig === undefined) {
    const node = document.getElementById('assistant-config');
    pageConfig = node ? JSON.parse(node.textContent) : {};
  }
  return pageConfig;
}

export const pageUrl = (path = '') => `${config().base}${path}`;
export const apiUrl = (path) => `${config().api}${path}`;
export const csrfToken = () => config().csrfToken ?? document.querySelector('meta[name="csrf-token"]')?.content ?? '';
const organization = () => config().organization ?? document.body.dataset.organization ?? '';

const unreachable = (status, code) => ({
  ok: false, status, data: { code, detail: gettext('The server could not be reached. Check your connection and try again.') },
});

export async function api(method, url, body, extraHeaders = {}) {
  // respond-async (RFC 7240): the page follows the turn's stream, whatever the deployment's default wait.
  const headers = { Accept: 'application/json', 'X-CSRFToken': csrfToken(), Prefer: 'respond-async', ...extraHeaders };
  if (organization()) headers['X-Organization'] = organization();
  // A FormData body (a file upload) sets its own multipart Content-Type.
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method, headers, credentials: 'same-origin',
      body: body === undefined || form ? body : JSON.stringify(body),
    });
  } catch {
    return unreachable(0, 'network');
  }
  let data = null;
  if (response.status !== 204) {
    try { data = await response.json(); } catch { data = null; }
  }
  // A success must carry its JSON (a server restarting or a proxy can answer 200 with a page).
  if (response.ok && response.status !== 204 && data === null) {
    return unreachable(response.status, 'bad_response');
  }
  if (!response.ok && !(data && typeof data.detail === 'string')) {
    data = { code: `http_${response.status}`, detail: interpolate(gettext('Something went wrong (error %(status)s). Please try again.'), { status: response.status }) };
  }
  return { ok: response.ok, status: response.status, data };
}

// An HTML fragment of this site; a lost session or organization reloads the page.
export async function fragment(url) {
  const response = await fetch(url, { headers: { Accept: 'text/html' }, credentials: 'same-origin' });
  if (response.status === 401 || response.status === 409) {
    window.location.reload();
    throw new Error('The session changed.');
  }
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.text();
}

export function parseFragment(html) {
  const template = document.createElement('template');
  template.innerHTML = html;
  return template.content;
}

// A small element builder: attributes and text only, never HTML.
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) node.append(child);
  return node;
}

// The product's data changed: the page around the assistant (a host page beside
// the panel) hears which tool acted on which object and updates itself. Sent
// for a confirmed card (ui.js) and for a write tool that ran in a turn
// (turn-follow.js). `object` is what the tool answered (e.g. {id, title, deleted}).
export function announceEffect(node, { tool, cardId = null, object, input = null }) {
  node.dispatchEvent(new CustomEvent('assistant:effect', { bubbles: true, detail: { tool, cardId, object, input } }));
}
