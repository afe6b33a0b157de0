// The server side of the offline client (memory.js): the esm-ai-memory
// contract at <ai>/conversations, as the server serves it
// (assistant_engine/surfaces/ai_memory/api.py):
//   GET    conversations       -> ConversationSummary[] (a bare array)
//   GET    conversations/{id}  -> StoredConversation (404: none)
//   PUT    conversations/{id}  -> full upsert, body = StoredConversation; the
//                                 answer is the version that won (last write
//                                 wins by updatedAt)
//   DELETE conversations/{id}  -> 204 (404: already gone; 409 while a turn runs)
// The person is implicit: the session cookie (same origin) with the CSRF
// token and the organization the page names, as the chat page sends them
// (api.js). It implements the seed's ConversationStorageAdapter; where the
// seed's adapter answered "ok: false", this one rejects with a
// BackendUnavailable the orchestrator catches, so "the server is away" is
// never mistaken for "the server has nothing".

export class BackendUnavailable extends Error {
  constructor(status, code = '') {
    super(`The conversation server did not answer (${status || 'network'}${code ? `, ${code}` : ''}).`);
    this.name = 'BackendUnavailable';
    this.status = status; // 0: the network
    this.code = code;
    // A document the server refuses as it stands (400, 413) would be
    // refused again: retry only once it has changed.
    this.permanent = status === 400 || status === 413;
  }
}

// Fields the server adds to a document (conversations.serializers
// conversation_to_json and its extras): the server's, never sent back as
// the client's own (it would keep them verbatim, stale).
const SERVER_FIELDS = ['status', 'model', 'summary', 'cards'];
const SERVER_MESSAGE_FIELDS = ['status', 'notice', 'supersededAt', 'replaces', 'attachments', 'afterReading'];

export function clientDocument(doc) {
  const out = { ...doc };
  for (const name of SERVER_FIELDS) delete out[name];
  out.messages = (doc.messages ?? []).map((message) => {
    const copy = { ...message };
    for (const name of SERVER_MESSAGE_FIELDS) delete copy[name];
    return copy;
  });
  return out;
}

// What the page says about the engine (templatetags/assistant.py renders it
// once as #assistant-config): its /ai/ root, the CSRF token, the
// organization and the person signed in.
export function pageConfig(doc = globalThis.document) {
  const node = doc?.getElementById?.('assistant-config');
  if (!node) return {};
  try { return JSON.parse(node.textContent) ?? {}; } catch { return {}; }
}

function cookie(name) {
  const found = (globalThis.document?.cookie ?? '').split('; ').find((part) => part.startsWith(`${name}=`));
  return found ? decodeURIComponent(found.slice(name.length + 1)) : '';
}

// A keepalive request's body may not exceed 64 KiB (all of a page's
// keepalive requests together): larger ones go as ordinary requests.
const KEEPALIVE_BYTES = 60 * 1024;

export class BackendAdapter {
  // baseUrl: the /ai/ root ("/ai/", "/helper/ai/"); csrfToken, organization:
  // values or functions; fetch: for tests or a product's own wrapper.
  constructor({ baseUrl, csrfToken, organization, fetch: fetcher } = {}) {
    const config = pageConfig();
    this.baseUrl = baseUrl ?? config.ai ?? (config.api ? config.api.replace(/api\/$/, 'ai/') : '/ai/');
    if (!this.baseUrl.endsWith('/')) this.baseUrl += '/';
    this.csrfToken = csrfToken ?? (() => config.csrfToken
      ?? globalThis.document?.querySelector?.('meta[name="csrf-token"]')?.content ?? cookie('csrftoken'));
    this.organization = organization ?? config.organization ?? '';
    this.fetch = fetcher ?? ((...args) => globalThis.fetch(...args));
  }

  url(id) {
    return `${this.baseUrl}conversations${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  }

  async call(method, url, body, { keepalive = false } = {}) {
    const headers = { Accept: 'application/json' };
    const token = typeof this.csrfToken === 'function' ? this.csrfToken() : this.csrfToken;
    if (token) headers['X-CSRFToken'] = token;
    const organization = typeof this.organization === 'function' ? this.organization() : this.organization;
    if (organization) headers['X-Organization'] = organization;
    const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    if (keepalive && new TextEncoder().encode(init.body ?? '').length < KEEPALIVE_BYTES) init.keepalive = true;
    let response;
    try {
      response = await this.fetch(url, init);
    } catch {
      throw new BackendUnavailable(0);
    }
    if (response.status === 204 || (response.status === 404 && method === 'DELETE')) return null;
    let data = null;
    try { data = await response.json(); } catch { data = null; }
    if (response.status === 404 && method === 'GET') return null;
    // A success must carry its JSON (a proxy or a restarting server may answer 200 with a page).
    if (!response.ok || data === null) throw new BackendUnavailable(response.ok ? 0 : response.status, data?.code);
    return data;
  }

  // userId: the seed's interface names the person; the server knows them by
  // the session (memory.js checks it is the same person before any call).
  async listConversations(_userId) {
    const data = await this.call('GET', this.url());
    if (!Array.isArray(data)) throw new BackendUnavailable(0, 'bad_response');
    return data;
  }

  getConversation(_userId, conversationId) {
    return this.call('GET', this.url(conversationId));
  }

  // Answers the version the server keeps: this one, or a newer one.
  saveConversation(conversation, options) {
    return this.call('PUT', this.url(conversation.id), clientDocument(conversation), options);
  }

  async deleteConversation(_userId, conversationId, options) {
    await this.call('DELETE', this.url(conversationId), undefined, options);
  }
}
