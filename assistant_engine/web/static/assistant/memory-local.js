// The local side of the offline client (memory.js): IndexedDB, one database
// per person ("assistant-memory:<userId>"), so one person's conversations can
// never be read or synced under another's name. It implements the seed's
// ConversationStorageAdapter (listConversations, getConversation,
// saveConversation, deleteConversation) and, for the sync, keeps beside each
// conversation its state: {id, revision, dirtySince, deleted, deletedAt,
// syncedAt, rejected}. A document and its state are always written in the
// same transaction: a reload between the two can't leave a change unmarked.

const VERSION = 1;
const DOCS = 'conversations';
const STATES = 'sync';

export const databaseName = (userId) => `assistant-memory:${userId}`;

export const toMillis = (value) => {
  if (typeof value === 'number') return value;
  const parsed = typeof value === 'string' ? Date.parse(value) : NaN;
  return Number.isNaN(parsed) ? 0 : parsed;
};

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
    tx.onerror = () => reject(tx.error);
  });
}

export function summaryOf(doc) {
  return {
    id: doc.id,
    title: doc.title ?? null,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    messageCount: Array.isArray(doc.messages) ? doc.messages.length : 0,
  };
}

export class IndexedDBAdapter {
  constructor({ indexedDB = globalThis.indexedDB } = {}) {
    this.factory = indexedDB;
    this.databases = new Map(); // userId -> Promise<IDBDatabase>
  }

  open(userId) {
    if (!userId) return Promise.reject(new Error('A userId is required.'));
    const key = String(userId);
    if (!this.databases.has(key)) {
      const opening = new Promise((resolve, reject) => {
        const req = this.factory.open(databaseName(key), VERSION);
        req.onupgradeneeded = () => {
          const db = req.result;
          if (!db.objectStoreNames.contains(DOCS)) db.createObjectStore(DOCS, { keyPath: 'id' });
          if (!db.objectStoreNames.contains(STATES)) db.createObjectStore(STATES, { keyPath: 'id' });
        };
        req.onsuccess = () => {
          const db = req.result;
          // Another tab upgrading or deleting this person's database: let it.
          db.onversionchange = () => { db.close(); this.databases.delete(key); };
          resolve(db);
        };
        req.onerror = () => reject(req.error);
        req.onblocked = () => reject(new Error('IndexedDB is blocked by another tab.'));
      });
      opening.catch(() => this.databases.delete(key));
      this.databases.set(key, opening);
    }
    return this.databases.get(key);
  }

  close(userId) {
    const key = String(userId);
    const opening = this.databases.get(key);
    this.databases.delete(key);
    if (opening) opening.then((db) => db.close(), () => {});
  }

  // --- the seed's ConversationStorageAdapter --------------------------------

  async listConversations(userId) {
    const db = await this.open(userId);
    const docs = await request(db.transaction(DOCS).objectStore(DOCS).getAll());
    return docs.map(summaryOf).sort((a, b) => toMillis(b.updatedAt) - toMillis(a.updatedAt));
  }

  async getConversation(userId, conversationId) {
    const db = await this.open(userId);
    return (await request(db.transaction(DOCS).objectStore(DOCS).get(String(conversationId)))) ?? null;
  }

  // A save here is a local change: the conversation becomes dirty (the
  // orchestrator uploads it later). Use `update` for anything else.
  async saveConversation(conversation) {
    await this.update(conversation.userId, conversation.id, (_doc, state, now) => ({
      doc: conversation, state: markDirty(state, conversation.id, now),
    }));
  }

  // A delete here is a local change too: a tombstone stays until the server
  // has applied it, so a later hydrate can't bring the conversation back.
  async deleteConversation(userId, conversationId) {
    await this.update(userId, conversationId, (doc, state, now) => ({
      doc: null, state: doc || state ? markDeleted(state, conversationId, now) : state,
    }));
  }

  // --- for the sync ------------------------------------------------------

  async listStates(userId) {
    const db = await this.open(userId);
    return request(db.transaction(STATES).objectStore(STATES).getAll());
  }

  async read(userId, conversationId) {
    const db = await this.open(userId);
    const tx = db.transaction([DOCS, STATES]);
    const [doc, state] = await Promise.all([
      request(tx.objectStore(DOCS).get(String(conversationId))),
      request(tx.objectStore(STATES).get(String(conversationId))),
    ]);
    return { doc: doc ?? null, state: state ?? null };
  }

  // One read-modify-write in one transaction (atomic across this origin's
  // tabs too): `change(doc, state, now)` answers {doc, state} synchronously;
  // null deletes, undefined leaves as is. Resolves to what was written.
  async update(userId, conversationId, change, now = Date.now()) {
    const db = await this.open(userId);
    const id = String(conversationId);
    const tx = db.transaction([DOCS, STATES], 'readwrite');
    const docs = tx.objectStore(DOCS);
    const states = tx.objectStore(STATES);
    let result;
    const finished = done(tx);
    const [doc, state] = await Promise.all([request(docs.get(id)), request(states.get(id))]);
    try {
      result = change(doc ?? null, state ?? null, now) ?? {};
    } catch (error) {
      tx.abort();
      await finished.catch(() => {});
      throw error;
    }
    if (result.doc === null) docs.delete(id); else if (result.doc !== undefined) docs.put(result.doc);
    if (result.state === null) states.delete(id); else if (result.state !== undefined) states.put(result.state);
    await finished;
    return { doc: result.doc === undefined ? doc ?? null : result.doc,
      state: result.state === undefined ? state ?? null : result.state };
  }

  // Forget a person's local store entirely (a shared computer, a sign-out).
  async destroy(userId) {
    this.close(userId);
    await request(this.factory.deleteDatabase(databaseName(String(userId))));
  }
}

export function markDirty(state, id, now) {
  return {
    id: String(id),
    revision: (state?.revision ?? 0) + 1,
    dirtySince: state?.dirtySince ?? now, // the first change not yet on the server
    deleted: false,
    deletedAt: null,
    syncedAt: state?.syncedAt ?? null,
    rejected: null,
  };
}

export function markDeleted(state, id, now) {
  return { ...markDirty(state, id, now), deleted: true, deletedAt: now };
}
