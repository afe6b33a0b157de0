// The chat: send a message, follow the turn's SSE stream, show the stored result.
// One component for the chat page and the assistant panel of host pages
// (assistant-chat.js mounts it on <assistant-chat>); `panel` changes only what
// belongs to the page around it: the address bar, the title, focus, shortcuts.
//
// While a turn runs, its text arrives as plain text (textContent) and its tool
// calls as rows built here; when it ends, the server's rendering of the
// conversation (Markdown, sanitized) replaces the live version.

import { api, apiUrl, el, fragment, pageUrl, parseFragment } from './api.js';
import { gettext, interpolate } from './i18n.js';
import { enhanceMessages } from './content.js';
import { textWithTex } from './math.js';
import { messageFiles, mountAttachments, sentFiles } from './attachments.js';
import { watchAttention } from './attention.js';
import { chosenModel, initReplyActions } from './reply-actions.js';
import { byData, followTurn, liveBlock } from './turn-follow.js';
import { BUSY_HINT, EDIT_FILES_HINT, EDIT_HINT, ENDED_ANNOUNCEMENTS, ERRORS, HINT, STOPPING_HINT, WAITING_HINT } from './chat-words.js';
import { chosenVersions, initVersions, restoreVersions } from './versions.js';
import { followTitle, plainTitle } from './titles.js';

export function mountChat(chat, { panel = false } = {}) {
  const doorHeaders = panel ? { 'X-Assistant-Door': 'panel' } : {}; // the spend by door (assistant/doors.py)
  // Everything the component hangs on the document goes when it is removed.
  const lifetime = new AbortController();
  const { signal } = lifetime;
  const scroller = chat.querySelector('[data-scroll]');
  const inner = chat.querySelector('.chat__inner');
  const messages = chat.querySelector('[data-messages]');
  const form = chat.querySelector('[data-composer]');
  const input = chat.querySelector('[data-composer-input]');
  const send = chat.querySelector('[data-send]');
  const sendLabel = chat.querySelector('[data-send-label]');
  const hint = chat.querySelector('[data-composer-hint]');
  const status = chat.querySelector('[data-announcer]');
  const banner = chat.querySelector('[data-banner]');
  const bannerText = chat.querySelector('[data-banner-text]');
  const bannerNew = chat.querySelector('[data-banner-new]');
  // turnId: the turn being followed (what Stop stops); editing: the composer holds the last message, to resend.
  const state = { conversationId: chat.dataset.conversationId || '', busy: false, turnId: '', editing: false };
  // What the host page shows (checked by the server against the person's rights).
  const pageContext = () => (chat.dataset.contextKind
    ? { kind: chat.dataset.contextKind, id: chat.dataset.contextId } : null);
  // The page's object is gone (deleted, here or elsewhere): the message went without it, and so will the next.
  function forgetPageContext() {
    delete chat.dataset.contextKind;
    delete chat.dataset.contextId;
    document.querySelector('[data-panel-context]')?.remove();
    showBanner(gettext('What you had open no longer exists, so the assistant was not told about it.'));
  }

  const announce = (text) => { status.textContent = ''; window.setTimeout(() => { status.textContent = text; }, 50); };
  const pinned = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
  const toBottom = () => { scroller.scrollTop = scroller.scrollHeight; };
  const keepPinned = (change) => { const was = pinned(); change(); if (was) toBottom(); };

  // While busy the Send button is Stop; `sending` covers the POST before the turn exists.
  function setBusy(busy, { sending = false } = {}) {
    state.busy = busy;
    if (!busy) state.turnId = '';
    send.disabled = sending;
    sendLabel.textContent = busy ? gettext('Stop') : gettext('Send');
    send.type = busy ? 'button' : 'submit';
    chat.classList.toggle('is-busy', busy);
    hint.textContent = busy ? BUSY_HINT : HINT;
    attention.replying(busy);
  }

  // The service is down (turn-follow.js): nothing is "replying" — not the composer, the tab or the
  // sidebar — the message waits; back to replying when the service answers again.
  function serviceDown(down) {
    if (!state.busy) return;
    hint.textContent = down ? WAITING_HINT : BUSY_HINT;
    attention.replying(!down);
    const item = state.conversationId && document.querySelector(
      `[data-conversation-item="${CSS.escape(state.conversationId)}"] .conv__live`);
    if (item) item.textContent = down ? gettext('Waiting…') : gettext('Replying…');
  }

  async function stop() {
    if (!state.busy || !state.turnId || send.disabled) return;
    send.disabled = true; // one Stop at a time; the stream's turn_ended frees the button
    hint.textContent = STOPPING_HINT;
    const response = await api('POST', apiUrl(`turns/${encodeURIComponent(state.turnId)}/cancel`));
    // 409 turn_ended: it ended meanwhile; the stream says how.
    if (!response.ok && response.data.code !== 'turn_ended') {
      send.disabled = false;
      hint.textContent = BUSY_HINT;
      showBanner(response.data.detail, { error: true });
    }
  }

  function showBanner(text, { offerNew = false, error = false } = {}) {
    bannerText.textContent = text;
    bannerNew.hidden = !offerNew;
    chat.querySelector('[data-credits-banner]')?.remove(); // the same explanation, said once
    banner.classList.toggle('banner--error', error);
    banner.hidden = false;
  }
  const hideBanner = () => { banner.hidden = true; };
  // The tab's title (the chat page's: a host page's title is its own) and the notifications.
  const attention = watchAttention(chat, { signal, focusComposer: () => input.focus(), markTitle: !panel });
  // What following a turn (turn-follow.js) needs of the component.
  const live = {
    chat, messages, signal, keepPinned, announce, showBanner, hideBanner, attention, finish, serviceDown,
    setTurn: (turnId) => { state.turnId = turnId; },
    bannerSays: (text) => !banner.hidden && bannerText.textContent === text,
  };
  const attachments = mountAttachments(chat, {
    signal, announce, showError: (text) => showBanner(text, { error: true }),
  });

  // The composer's draft, per conversation, kept across reloads (cleared on send).
  const draftKey = (conversationId) => `assistant:draft:${conversationId || 'new'}`;
  const storage = (action) => { try { return action(window.localStorage); } catch { return null; } };
  const saveDraft = () => storage((store) => (input.value
    ? store.setItem(draftKey(state.conversationId), input.value)
    : store.removeItem(draftKey(state.conversationId))));

  // Other tabs of this browser learn when a turn starts or ends (same origin only).
  const channel = 'BroadcastChannel' in window ? new BroadcastChannel('assistant-turns') : null;
  signal.addEventListener('abort', () => channel?.close());
  const tell = (type, turnId) => channel?.postMessage({ type, turnId, conversationId: state.conversationId });

  function autosize() {
    input.style.height = 'auto';
    input.style.height = `${Math.min(input.scrollHeight, 220)}px`;
  }

  // --- Sending -----------------------------------------------------------

  async function submit() {
    if (!input.value.trim() || state.busy || state.waitingForFiles) return;
    if (attachments.busy) { // sent as soon as its files are uploaded and read
      state.waitingForFiles = true;
      announce(gettext('Your message is sent once its files are ready.'));
      await attachments.ready();
      state.waitingForFiles = false;
      if (state.busy) return;
    }
    const text = input.value;
    if (!text.trim()) return;
    if (state.editing) { // the message's files still shown are those the new version keeps
      redo('edit', { message: text, attachments: attachments.files.map((file) => file.id) });
      return;
    }
    hideBanner();
    setBusy(true, { sending: true });
    const files = attachments.files;
    const body = { message: text };
    if (files.length) body.attachments = files.map((file) => file.id);
    if (state.conversationId) body.conversationId = state.conversationId;
    if (pageContext()) body.context = pageContext();
    if (!state.conversationId && chosenModel(chat)) body.model = chosenModel(chat);
    const response = await api('POST', apiUrl('chat'), body, doorHeaders);
    if (!response.ok) {
      setBusy(false);
      const code = response.data.code;
      showBanner(ERRORS[code] ?? response.data.detail, { offerNew: code === 'conversation_full', error: !ERRORS[code] });
      input.focus();
      return;
    }
    const { conversationId, turnId, messageId, contextDropped } = response.data;
    if (contextDropped) forgetPageContext();
    state.turnId = turnId;
    send.disabled = false;
    storage((store) => store.removeItem(draftKey(state.conversationId)));
    input.value = '';
    attachments.clear();
    autosize();
    input.focus();
    if (!state.conversationId) startConversation(conversationId, text);
    messages.append(el('article', { class: 'msg msg--user', 'aria-label': gettext('You') },
      el('h2', { class: 'visually-hidden' }, gettext('You said')),
      el('div', { class: 'msg__bubble prose is-plain', 'data-message-id': messageId }, text),
      ...(files.length ? [sentFiles(files)] : [])));
    liveBlock(live, turnId);
    toBottom();
    announce(gettext('Message sent. The assistant is replying.'));
    tell('turn_started', turnId);
    followTurn(live, turnId);
    refreshSidebar();
  }

  // Regenerate the last reply, or resend the edited last message: a new turn;
  // the server keeps the old version, shown as "Previous version".
  async function redo(action, body) {
    hideBanner();
    setBusy(true, { sending: true });
    const url = apiUrl(`conversations/${encodeURIComponent(state.conversationId)}/${action}`);
    const response = await api('POST', url, body, doorHeaders);
    if (!response.ok) {
      setBusy(false);
      showBanner(ERRORS[response.data.code] ?? response.data.detail, { error: !ERRORS[response.data.code] });
      return;
    }
    if (action === 'edit') {
      stopEditing();
      storage((store) => store.removeItem(draftKey(state.conversationId)));
    }
    state.turnId = response.data.turnId;
    await refreshMessages();
    liveBlock(live, state.turnId);
    send.disabled = false; // now Stop
    toBottom();
    announce(action === 'edit' ? gettext('Message resent. The assistant is replying.') : gettext('The assistant is replying again.'));
    tell('turn_started', state.turnId);
    followTurn(live, state.turnId);
  }

  function startEditing() {
    const last = [...messages.querySelectorAll('.msg--user:not(.msg--previous) .msg__bubble')].pop();
    if (!last || state.busy) return;
    state.editing = true;
    const source = last.previousElementSibling; // the message as written, Markdown and all (the page's)
    input.value = (source?.matches('template') ? source.content.textContent : last.innerText).trim();
    autosize();
    // The server copies the message's files to the edited one (chat_edit), those
    // still shown as chips (each removable): say so while editing.
    const files = messageFiles(last.nextElementSibling);
    attachments.editing(files);
    hint.textContent = files.length ? `${EDIT_HINT} · ${EDIT_FILES_HINT}` : EDIT_HINT;
    input.focus();
  }

  function stopEditing() {
    state.editing = false;
    attachments.editing(null);
    input.value = '';
    autosize();
    hint.textContent = state.busy ? BUSY_HINT : HINT;
  }

  // The buttons on the last reply (Regenerate) and the last message (Edit).
  function addRedoButtons() {
    const reply = [...messages.querySelectorAll('.msg--assistant:not(.msg--previous)')].pop();
    const mine = [...messages.querySelectorAll('.msg--user:not(.msg--previous)')].pop();
    if (reply) {
      let actions = reply.querySelector('.msg__actions');
      if (!actions) {
        actions = el('div', { class: 'msg__actions' });
        reply.querySelector('[data-parts]').append(actions);
      }
      actions.append(el('button', { type: 'button', class: 'btn btn--ghost btn--small', 'data-redo': 'regenerate' },
        gettext('Regenerate')));
    }
    if (mine) {
      mine.append(el('button', { type: 'button', class: 'btn btn--ghost btn--small msg__edit', 'data-redo': 'edit' },
        gettext('Edit your message')));
    }
  }

  function startConversation(conversationId, text) {
    state.conversationId = conversationId;
    chat.dataset.conversationId = conversationId;
    chat.querySelector('[data-welcome]')?.remove();
    const title = plainTitle(text);
    inner.prepend(el(panel ? 'h3' : 'h1', { class: 'chat__title' }, title));
    // The panel lives beside a host page: it tells the page instead of taking its address and title.
    chat.dispatchEvent(new CustomEvent('assistant:conversation', { bubbles: true, detail: { conversationId } }));
    if (panel) return;
    window.history.replaceState(null, '', pageUrl(`c/${conversationId}/`));
    document.title = `${title} · ${gettext('Assistant')}`;
  }

  // --- Following a turn --------------------------------------------------
  // (turn-follow.js: the live reply, its stream and its reconnection.)

  async function finish(ended) {
    tell('turn_ended', ended.turnId ?? state.turnId);
    await refreshMessages();
    setBusy(false);
    attention.ended(ended.status);
    refreshSidebar();
    refreshCredits();
    // Focus stays where the person put it (an Enter must not send a draft by surprise).
    announce(ENDED_ANNOUNCEMENTS[ended.status] ?? replyAnnouncement());
  }

  // The finished reply's first sentence (of 20 characters at least), for the live region.
  function replyAnnouncement() {
    const reply = [...messages.querySelectorAll('.msg--assistant')].pop();
    const text = [...(reply?.querySelectorAll('[data-text]') ?? [])].map(textWithTex).join(' ')
      .replace(/\s+/g, ' ').trim();
    if (!text) return gettext('The assistant replied.');
    const sentence = text.match(/^[\s\S]{20,}?[.!?](?=\s|$)/)?.[0] ?? text;
    return interpolate(gettext('The assistant replied: %(sentence)s'), { sentence: sentence.slice(0, 200) });
  }

  async function refreshMessages() {
    if (!state.conversationId) return;
    let html;
    try {
      html = await fragment(pageUrl(`c/${state.conversationId}/messages`));
    } catch {
      return;
    }
    const open = [...messages.querySelectorAll('details[open][data-tool-call-id]')].map((d) => d.dataset.toolCallId);
    const chosen = chosenVersions(messages);
    keepPinned(() => {
      messages.replaceChildren(parseFragment(html));
      enhanceMessages(messages);
      restoreVersions(messages, chosen);
      addRedoButtons();
      messages.dataset.runningTurn = '';
      for (const id of open) byData(messages, 'tool-call-id', id)?.setAttribute('open', '');
    });
  }

  async function refreshSidebar() {
    const list = document.querySelector('[data-sidebar-list]');
    if (!list) return;
    const pages = list.querySelector('[data-pages]')?.dataset.pages ?? '1';
    const search = document.querySelector('[data-sidebar-search-input]')?.value.trim() ?? '';
    const query = new URLSearchParams({ current: state.conversationId, pages, q: search });
    try {
      list.replaceChildren(parseFragment(await fragment(pageUrl(`conversations/list?${query}`))));
      followTitle(chat, { panel });
    } catch { /* the list stays as it was */ }
  }

  async function refreshCredits() {
    const response = await api('GET', apiUrl('credits'));
    if (!response.ok) return;
    const pill = document.querySelector('[data-credits]');
    const credits = response.data;
    // Under a cap the pill counts the person's credits (the page says "of your N"); the panel's line too.
    const left = credits.person?.remainingCredits ?? credits.remainingCredits;
    document.querySelectorAll('[data-credits-value]').forEach((node) => { node.textContent = left; });
    pill?.classList.toggle('pill--empty', left <= 0);
    const details = document.querySelector('[data-credits-details]');
    if (details) details.textContent = interpolate(
      gettext('%(used)s used, %(reserved)s reserved of %(granted)s this month (%(month)s, UTC)'),
      { used: credits.usedCredits, reserved: credits.reservedCredits, granted: credits.grantedCredits, month: credits.month });
  }

  // --- Composer events ---------------------------------------------------

  form.addEventListener('submit', (event) => { event.preventDefault(); submit(); });
  send.addEventListener('click', () => { if (state.busy) stop(); });
  document.addEventListener('keydown', (event) => {
    // In a panel, keys act only from inside it (the host page has its own).
    if (panel && !chat.contains(event.target)) return;
    // Escape stops the reply, unless it is closing a dialog or the drawer first.
    // Shift+Escape is the page's shortcut to the composer (shortcuts.js), not a stop.
    if (event.key !== 'Escape' || event.shiftKey) return;
    if (state.editing && !state.busy) { stopEditing(); return; }
    if (!state.busy) return;
    if (document.querySelector('dialog[open], [data-sidebar].is-open, [data-account-menu].is-open')) return;
    event.stopPropagation(); // the reply stops; the panel stays open
    stop();
  }, { signal, capture: panel });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  input.addEventListener('input', () => { autosize(); saveDraft(); });
  channel?.addEventListener('message', ({ data }) => {
    refreshSidebar();
    if (data.conversationId !== state.conversationId || state.busy) return;
    // This tab shows the conversation another tab just started or ended a turn in.
    if (data.type === 'turn_started') refreshMessages().then(() => { setBusy(true); followTurn(live, data.turnId); });
    else refreshMessages();
  });
  chat.querySelector('[data-banner-close]').addEventListener('click', () => { hideBanner(); input.focus(); });
  chat.addEventListener('click', (event) => {
    const redoButton = event.target.closest('[data-redo]');
    if (redoButton?.dataset.redo === 'regenerate') redo('regenerate');
    else if (redoButton) startEditing();
    const example = event.target.closest('[data-example]');
    if (example) {
      input.value = example.textContent.trim();
      autosize();
      input.focus();
    }
  });

  initVersions(messages, announce);
  initReplyActions(chat, {
    conversationId: () => state.conversationId, announce, signal,
    showError: (text) => showBanner(text, { error: true }),
  });
  enhanceMessages(messages);
  addRedoButtons();
  input.value = storage((store) => store.getItem(draftKey(state.conversationId))) ?? '';
  autosize();
  // On load (so after switching conversations too): the composer, not 113 Tabs away.
  // A panel leaves focus to its host page.
  if (!panel) input.focus({ preventScroll: true });

  // A turn still running when the page was (re)loaded: follow it.
  if (messages.dataset.runningTurn) {
    setBusy(true);
    followTurn(live, messages.dataset.runningTurn);
  }
  toBottom();
  return { refreshMessages, refreshSidebar, destroy: () => lifetime.abort() };
}
