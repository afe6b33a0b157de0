// The sync of the offline client (memory.js): what goes up (push), what
// comes down (hydrate), and how the two versions of a conversation meet:
// last write wins by updatedAt, a delete counting as a write at its time.
// Every merge is one IndexedDB transaction (memory-local.js `update`) that
// re-reads the record first, so an interaction written while a request was
// on the wire is never overwritten by that request's answer.

import { BackendUnavailable } from './memory-backend.js';
import { toMillis } from './memory-local.js';

export const isDirty = (state) => Boolean(state && (state.deleted || state.dirtySince != null));

// The revision only ever grows (never reset), so an answer to an older send
// can't take a later change for the one it sent.
export const cleanState = (id, now, state) => ({
  id: String(id), revision: state?.revision ?? 0, dirtySince: null, deleted: false, deletedAt: null, syncedAt: now, rejected: null,
});

// The time a record last changed, for last-write-wins: a tombstone's is its deletion.
const writtenAt = (doc, state) => (state?.deleted ? state.deletedAt : doc ? toMillis(doc.updatedAt) : -Infinity);

// A document as this person's store keeps it (the seed's StoredConversation names its owner).
export const owned = (doc, userId) => ({ ...doc, userId: String(userId) });

// Send one conversation's local change. Resolves to 'sent', 'clean',
// 'kept' (changed meanwhile: stays dirty), 'rejected', 'failed' (this one:
// a turn running, 409) or 'away' (the network, 5xx, the session, a throttle:
// the others would fail too); never rejects for the server's sake (a
// BackendUnavailable is recorded by `onError`).
export async function pushOne({ local, backend, userId, id, now, onError, onChange }) {
  const { doc, state } = await local.read(userId, id);
  if (!isDirty(state)) return 'clean';
  if (state.rejected && state.rejected.revision === state.revision) return 'rejected';
  const revision = state.revision;
  try {
    if (state.deleted) {
      await backend.deleteConversation(userId, id);
      const { state: after } = await local.update(userId, id, (_d, s) => (
        s?.deleted && s.revision === revision ? { state: null } : {}), now());
      return after === null ? 'sent' : 'kept';
    }
    if (!doc) {
      await local.update(userId, id, () => ({ state: null }), now());
      return 'clean';
    }
    const server = await backend.saveConversation(doc);
    let outcome = 'kept';
    await local.update(userId, id, (d, s, at) => {
      if (!s || s.deleted || !d) return {}; // deleted meanwhile: its tombstone goes next
      const serverNewer = server && toMillis(server.updatedAt) > toMillis(d.updatedAt);
      if (s.revision !== revision && !serverNewer) return {};
      outcome = 'sent';
      // The version that won: ours with the server's fields, or a newer one.
      const kept = server && (serverNewer || toMillis(server.updatedAt) === toMillis(d.updatedAt))
        ? owned(server, userId) : d;
      if (kept !== d) onChange?.(id);
      return { doc: kept, state: cleanState(id, at, s) };
    }, now());
    return outcome;
  } catch (error) {
    if (!(error instanceof BackendUnavailable)) throw error;
    onError?.(error);
    if (!error.permanent) return error.status === 409 || error.status === 404 ? 'failed' : 'away';
    // Refused as it stands (400, 413): tried again once it changes, not every tick.
    await local.update(userId, id, (_d, s) => (
      s && s.revision === revision ? { state: { ...s, rejected: { revision, status: error.status, code: error.code } } } : {}
    ), now());
    return 'rejected';
  }
}

// Bring the server's versions down, merged by last write wins. Resolves to
// true when the server answered the list (false: nothing was changed).
export async function hydrate({ local, backend, userId, now, onError, onChange }) {
  let summaries;
  try {
    summaries = await backend.listConversations(userId);
  } catch (error) {
    if (!(error instanceof BackendUnavailable)) throw error;
    onError?.(error);
    return false;
  }
  const onServer = new Set();
  for (const summary of summaries) {
    const id = String(summary.id);
    onServer.add(id);
    const { doc, state } = await local.read(userId, id);
    if ((doc || state?.deleted) && toMillis(summary.updatedAt) <= writtenAt(doc, state)) continue;
    let full;
    try {
      full = await backend.getConversation(userId, id);
    } catch (error) {
      if (!(error instanceof BackendUnavailable)) throw error;
      onError?.(error);
      continue;
    }
    if (!full) continue;
    await local.update(userId, id, (d, s, at) => {
      if ((d || s?.deleted) && toMillis(full.updatedAt) <= writtenAt(d, s)) return {};
      onChange?.(id);
      return { doc: owned(full, userId), state: cleanState(id, at, s) };
    }, now());
  }
  // Here once, gone from the server since (deleted on another device), and
  // not changed here since: gone here too. A local change is kept (and sent).
  for (const state of await local.listStates(userId)) {
    if (onServer.has(state.id) || isDirty(state) || state.syncedAt == null) continue;
    await local.update(userId, state.id, (_d, s) => {
      if (!s || isDirty(s) || s.syncedAt == null) return {};
      onChange?.(state.id);
      return { doc: null, state: null };
    }, now());
  }
  return true;
}
