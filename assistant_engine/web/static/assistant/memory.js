// The offline-first conversation memory for host pages (the esm-ai-memory
// package's role), a plain ES module: docs/offline-client.md.
//
//   import { createConversationMemory } from '/static/assistant/memory.js';
//   const memory = createConversationMemory();          // the signed-in person, from the page
//   const conversation = await memory.startConversation({ title: 'Trip' });
//   await memory.addMessage(conversation.id, { role: 'user', content: 'Hello' });
//
// Every interaction is written to IndexedDB at once (memory-local.js); every
// `syncIntervalMs` (20 s) the conversations dirty for `syncAfterMs` (3 min)
// or more go to the server's /ai/ door (memory-backend.js), and all of them
// when the tab is hidden or closed; at login (`setUser`) the server's versions
// are merged in, last write wins by updatedAt (memory-sync.js). The server
// being away never reaches the page: what waits stays dirty and is sent later.
// No method rejects; the store tells its state through DOM events on itself:
// `change` (detail {id}: a conversation changed from elsewhere) and `status`.

import { BackendAdapter, BackendUnavailable, pageConfig } from './memory-backend.js';
import { IndexedDBAdapter, markDeleted, markDirty, summaryOf, toMillis } from './memory-local.js';
import { hydrate, isDirty, owned, pushOne } from './memory-sync.js';

export { BackendAdapter, BackendUnavailable, IndexedDBAdapter };

// The seed's rule: a tick every ~20 s syncs what has waited 3 minutes.
export const DEFAULTS = Object.freeze({ syncIntervalMs: 20_000, syncAfterMs: 180_000 });

const randomId = (prefix) => {
  const uuid = globalThis.crypto?.randomUUID?.()
    ?? Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  return `${prefix}-${uuid}`;
};

export function createConversationMemory(options = {}) {
  return new ConversationMemory(options);
}

export class ConversationMemory extends EventTarget {
  constructor({
    userId, local, backend, syncIntervalMs = DEFAULTS.syncIntervalMs, syncAfterMs = DEFAULTS.syncAfterMs,
    now = () => Date.now(), signedInUser, flushOnHide = true, autoSync = true, ...backendOptions
  } = {}) {
    super();
    const config = pageConfig();
    this.options = Object.freeze({ syncIntervalMs, syncAfterMs, flushOnHide, autoSync });
    this.now = now;
    this.local = local ?? new IndexedDBAdapter();
    this.backend = backend ?? new BackendAdapter(backendOptions);
    // The person whose session the page carries (the server answers for them only).
    this.signedInUser = signedInUser ?? config.user ?? null;
    this.userId = null;
    this.hydrated = false;
    this.pending = new Map(); // id -> {doc | null (deleted)}: what the pagehide flush can send at once
    this.state = { online: null, lastSyncAt: null, lastError: null, rejected: 0 };
    this.running = null;
    this.timer = null;
    this.onHidden = () => { if (document.visibilityState === 'hidden') this.flush(); };
    this.onPageHide = () => this.flushNow();
    this.onOnline = () => this.syncDue();
    if (flushOnHide && globalThis.document) {
      document.addEventListener('visibilitychange', this.onHidden);
      window.addEventListener('pagehide', this.onPageHide);
    }
    globalThis.window?.addEventListener('online', this.onOnline);
    const first = userId ?? this.signedInUser;
    this.ready = first != null ? this.setUser(first) : Promise.resolve([]);
  }

  // --- whose memory -------------------------------------------------------

  // Login, logout (null) or another person: everything is reloaded for them.
  // Resolves to their conversations once the server's are merged in (or at
  // once from the local store when the server is away). A page that signs
  // people in without a reload says who its session is for now:
  // `setUser(id, { signedInUser: id })`.
  async setUser(userId, { signedInUser } = {}) {
    if (signedInUser !== undefined) this.signedInUser = signedInUser;
    const previous = this.userId;
    this.stopTimer();
    if (previous != null && String(previous) !== String(userId)) this.local.close(previous);
    this.userId = userId == null ? null : String(userId);
    this.hydrated = false;
    this.pending.clear();
    this.state = { online: null, lastSyncAt: null, lastError: null, rejected: 0 };
    if (this.userId === null) { this.emitStatus(); return []; }
    const mine = this.userId;
    await this.safely(async () => {
      for (const state of await this.local.listStates(mine)) {
        if (!isDirty(state)) continue;
        this.pending.set(state.id, state.deleted ? null : await this.local.getConversation(mine, state.id));
      }
    });
    if (this.userId !== mine) return [];
    this.dispatchEvent(new CustomEvent('user', { detail: { userId: mine } }));
    await this.hydrate();
    if (this.options.autoSync && this.userId === mine) {
      this.timer = setInterval(() => this.syncDue(), this.options.syncIntervalMs);
    }
    return this.listConversations();
  }

  // The server answers for the signed-in person only: another person's
  // store (the page knows who is signed in) stays local, never uploaded into
  // the wrong account.
  get canSync() {
    return this.userId !== null && (this.signedInUser == null || String(this.signedInUser) === this.userId);
  }

  // --- the seed's ConversationStorageAdapter, for the current person --------

  async listConversations() {
    if (this.userId === null) return [];
    return (await this.safely(() => this.local.listConversations(this.userId))) ?? [];
  }

  async getConversation(conversationId) {
    if (this.userId === null) return null;
    return (await this.safely(() => this.local.getConversation(this.userId, conversationId))) ?? null;
  }

  // A whole document of the host's (its own fields kept); stamped newer.
  saveConversation(conversation) {
    const id = String(conversation.id ?? randomId('c'));
    return this.write(id, (doc) => ({ ...doc, ...conversation, id, messages: conversation.messages ?? doc?.messages ?? [] }),
      { create: true });
  }

  async deleteConversation(conversationId) {
    if (this.userId === null) return false;
    const id = String(conversationId);
    const written = await this.safely(() => this.local.update(this.userId, id, (doc, state, now) => (
      doc || state ? { doc: null, state: markDeleted(state, id, now) } : {}), this.now()));
    if (!written?.state) return false;
    this.pending.set(id, null);
    this.emitStatus();
    return true;
  }

  // --- interactions (the seed's addUserMessage, recordToolCall, …) ---------

  startConversation(fields = {}) {
    const at = this.now();
    return this.saveConversation({ title: null, createdAt: at, ...fields, messages: fields.messages ?? [] });
  }

  // `message`: {role, content, toolCalls?, id?, createdAt?, …}; resolves to it as stored.
  async addMessage(conversationId, message) {
    const stored = { id: randomId('m'), content: '', createdAt: this.now(), toolCalls: [], ...message };
    const doc = await this.write(String(conversationId), (current) => (
      current && { ...current, messages: [...(current.messages ?? []), stored] }));
    return doc ? stored : null;
  }

  // Change a message in place (a streamed reply growing, a tool's result).
  async updateMessage(conversationId, messageId, change) {
    const doc = await this.write(String(conversationId), (current) => {
      const index = current?.messages?.findIndex((m) => m.id === messageId) ?? -1;
      if (index < 0) return null;
      const old = current.messages[index];
      const messages = current.messages.slice();
      messages[index] = typeof change === 'function' ? change(old) : { ...old, ...change };
      return { ...current, messages };
    });
    return doc?.messages.find((m) => m.id === messageId) ?? null;
  }

  recordToolCall(conversationId, messageId, call) {
    return this.updateMessage(conversationId, messageId, (message) => {
      const calls = (message.toolCalls ?? []).filter((c) => c.id !== call.id);
      return { ...message, toolCalls: [...calls, { input: {}, result: null, ...call }] };
    });
  }

  // One local write: the document, stamped newer than itself, and its dirty
  // mark, in one transaction. Resolves to the document (null: nothing written).
  async write(id, change, { create = false } = {}) {
    if (this.userId === null) return null;
    const userId = this.userId;
    const written = await this.safely(() => this.local.update(userId, id, (doc, state, now) => {
      if (!doc && !create) return {};
      const next = change(doc);
      if (!next) return {};
      const updatedAt = Math.max(now, toMillis(doc?.updatedAt) + 1); // always newer, even within a millisecond
      const stored = owned({ ...next, createdAt: next.createdAt ?? doc?.createdAt ?? now, updatedAt }, userId);
      return { doc: stored, state: markDirty(state, id, now) };
    }, this.now()));
    if (!written?.doc || written.state?.dirtySince == null || this.userId !== userId) return null;
    this.pending.set(id, written.doc);
    this.emitStatus();
    return written.doc;
  }

  // --- the sync ---------------------------------------------------------

  // The tick: conversations dirty for syncAfterMs or more (and the hydrate
  // a login while the server was away could not do).
  syncDue() {
    return this.sync(({ dirtySince }) => dirtySince != null && this.now() - dirtySince >= this.options.syncAfterMs);
  }

  // Everything that waits, now (the tab hidden; a host's "sync now").
  flush() {
    return this.sync(() => true);
  }

  hydrate() {
    return this.exclusive(() => this.hydrateNow());
  }

  async hydrateNow() {
    const context = this.context();
    if (!context) return false;
    const ok = await hydrate(context);
    if (ok && this.userId === context.userId) {
      this.hydrated = true;
      this.reachable();
    }
    return ok;
  }

  // One sync at a time in this tab (a call during one waits for it and runs
  // after), and in this browser (Web Locks: the person's other tabs skip).
  sync(due) {
    return this.exclusive(async () => {
      const context = this.context();
      if (!context || globalThis.navigator?.onLine === false) return;
      if (!this.hydrated && !(await this.hydrateNow())) return;
      for (const state of await this.local.listStates(context.userId)) {
        if (this.userId !== context.userId) return;
        if (!isDirty(state) || !due(state)) continue;
        const outcome = await pushOne({ ...context, id: state.id });
        if (outcome === 'sent') this.reachable();
        if (outcome === 'away') break; // the server is away (or the session lost): the rest waits too
      }
      // What still waits (a merge may have settled some): the pagehide flush's list.
      const states = await this.local.listStates(context.userId);
      const waiting = new Set(states.filter(isDirty).map((state) => state.id));
      for (const id of [...this.pending.keys()]) if (!waiting.has(id)) this.pending.delete(id);
      this.state.rejected = states.filter((state) => isDirty(state) && state.rejected?.revision === state.revision).length;
      this.emitStatus();
    });
  }

  // Resolves once the syncs asked for so far are done (a test, a host's spinner).
  idle() {
    return (this.running ?? Promise.resolve()).then(() => undefined);
  }

  exclusive(work) {
    const run = async () => {
      if (!globalThis.navigator?.locks || this.userId === null) return this.safely(work);
      try {
        const held = await navigator.locks.request(`assistant-memory:${this.userId}`, { ifAvailable: true },
          async (lock) => (lock ? { value: await this.safely(work) } : null));
        return held?.value;
      } catch {
        return this.safely(work); // no lock to be had here (an opaque origin): this tab alone
      }
    };
    this.running = (this.running ?? Promise.resolve()).then(run, run);
    return this.running;
  }

  context() {
    if (!this.canSync) return null;
    return {
      local: this.local, backend: this.backend, userId: this.userId, now: this.now,
      onError: (error) => this.unreachable(error),
      onChange: (id) => this.dispatchEvent(new CustomEvent('change', { detail: { id } })),
    };
  }

  // The page is going away: what waits goes now, without waiting for
  // IndexedDB (keepalive requests outlive the page). Still dirty here, it is
  // sent again next time: the server keeps one version of it either way.
  flushNow() {
    if (!this.canSync) return;
    for (const [id, doc] of this.pending) {
      const sent = doc ? this.backend.saveConversation(doc, { keepalive: true })
        : this.backend.deleteConversation(this.userId, id, { keepalive: true });
      sent.catch(() => {});
    }
  }

  // --- state ----------------------------------------------------------

  get status() {
    return { userId: this.userId, hydrated: this.hydrated, waiting: this.pending.size, ...this.state };
  }

  reachable() {
    this.state.online = true;
    this.state.lastSyncAt = this.now();
    this.state.lastError = null;
  }

  unreachable(error) {
    this.state.online = error.permanent ? this.state.online : false;
    this.state.lastError = { status: error.status, code: error.code };
    this.emitStatus();
  }

  emitStatus() {
    this.dispatchEvent(new CustomEvent('status', { detail: this.status }));
  }

  // The local store failing (a quota, a private window) is told, never thrown.
  async safely(work) {
    try {
      return await work();
    } catch (error) {
      this.state.lastError = { status: 0, code: 'local', message: String(error?.message ?? error) };
      this.emitStatus();
      return undefined;
    }
  }

  stopTimer() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  close() {
    this.stopTimer();
    if (globalThis.document) {
      document.removeEventListener('visibilitychange', this.onHidden);
      window.removeEventListener('pagehide', this.onPageHide);
    }
    globalThis.window?.removeEventListener('online', this.onOnline);
    if (this.userId !== null) this.local.close(this.userId);
  }
}

export { summaryOf };
