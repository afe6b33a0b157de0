// The chat: send a message, follow the turn's SSE stream, show the stored result.
// One component for the chat page and the assistant panel of host pages
// (assistant-chat.js mounts it on <assistant-chat>); `panel` changes only what
// belongs to the page around it: the address bar, the title, focus, shortcuts.
//
// While a turn runs, its text arrives as plain text (textContent) and its tool
// calls as rows built here; when it ends, the server's rendering of the
// conversation (Markdown, sanitized) replaces the live version.

import { api, el, fragment, parseFragment } from './api.js';
import { gettext, interpolate } from './i18n.js';
import { enhanceMessages } from './content.js';
import { mountAttachments, sentFiles } from './attachments.js';
import { watchAttention } from './attention.js';
import { MODEL_NOT_ALLOWED, chosenModel, initReplyActions } from './reply-actions.js';
import {
  addLiveVersion, chosenVersions, currentVersionOf, initVersions, restoreVersions,
} from './versions.js';

const ERRORS = {
  credits_exhausted: gettext('Your organization has used all its credits for this month, so the assistant cannot reply. Credits renew on the 1st (UTC); an administrator can grant more.'),
  conversation_full: gettext('This conversation is full: it has reached the length the model can read. Start a new conversation to go on.'),
  model_not_allowed: MODEL_NOT_ALLOWED,
  conversation_busy: gettext('The assistant is still replying in this conversation. Wait for the reply to finish, then send your message again.'),
};
const HINT = gettext('Enter to send · Shift+Enter for a new line');
const BUSY_HINT = gettext('The assistant is replying… Escape or Stop ends the reply; you can write your next message meanwhile.');
const STOPPING_HINT = gettext('Stopping the reply…');
const WAITING = gettext('Waiting for the assistant to start…');
const SERVICE_DOWN = gettext("The assistant service isn't answering right now; your message is kept and runs when it is back.");
const SERVICE_RECHECK_MS = 5000;
const ENDED = ['done', 'failed', 'cancelled'];
const EDIT_HINT = gettext('Editing your last message: Enter resends it (the old one is kept as a previous version) · Escape cancels');
const RECONNECTING = gettext('The connection to the server was lost. Reconnecting…');
const ENDED_ANNOUNCEMENTS = { failed: gettext('The reply failed.'), cancelled: gettext('You stopped the reply.') };
const TITLE_LENGTH = 60;

const humanize = (name) => {
  const words = name.replace(/-/g, '_').split('_').join(' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

const pretty = (value) => {
  if (typeof value === 'string') {
    try { return JSON.stringify(JSON.parse(value), null, 2); } catch { return value; }
  }
  return JSON.stringify(value ?? null, null, 2);
};

const byData = (root, name, value) => root.querySelector(`[data-${name}="${CSS.escape(value)}"]`);

export function mountChat(chat, { panel = false } = {}) {
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
    attention?.replying(busy);
  }

  async function stop() {
    if (!state.busy || !state.turnId || send.disabled) return;
    send.disabled = true; // one Stop at a time; the stream's turn_ended frees the button
    hint.textContent = STOPPING_HINT;
    const response = await api('POST', `/api/turns/${encodeURIComponent(state.turnId)}/cancel`);
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
  // The tab's title and the notifications: the chat page's (a host page's title is its own).
  const attention = panel ? null : watchAttention(chat, { signal, focusComposer: () => input.focus() });
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
    const text = input.value;
    if (!text.trim() || state.busy || attachments.busy) return;
    if (state.editing) { redo('edit', { message: text }); return; }
    hideBanner();
    setBusy(true, { sending: true });
    const files = attachments.files;
    const body = { message: text };
    if (files.length) body.attachments = files.map((file) => file.id);
    if (state.conversationId) body.conversationId = state.conversationId;
    if (pageContext()) body.context = pageContext();
    if (!state.conversationId && chosenModel(chat)) body.model = chosenModel(chat);
    const response = await api('POST', '/api/chat', body);
    if (!response.ok) {
      setBusy(false);
      const code = response.data.code;
      showBanner(ERRORS[code] ?? response.data.detail, { offerNew: code === 'conversation_full', error: !ERRORS[code] });
      input.focus();
      return;
    }
    const { conversationId, turnId, messageId } = response.data;
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
    liveBlock(turnId);
    toBottom();
    announce(gettext('Message sent. The assistant is replying.'));
    tell('turn_started', turnId);
    follow(turnId);
    refreshSidebar();
  }

  // Regenerate the last reply, or resend the edited last message: a new turn;
  // the server keeps the old version, shown as "Previous version".
  async function redo(action, body) {
    hideBanner();
    setBusy(true, { sending: true });
    const url = `/api/conversations/${encodeURIComponent(state.conversationId)}/${action}`;
    const response = await api('POST', url, body);
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
    liveBlock(state.turnId);
    send.disabled = false; // now Stop
    toBottom();
    announce(action === 'edit' ? gettext('Message resent. The assistant is replying.') : gettext('The assistant is replying again.'));
    tell('turn_started', state.turnId);
    follow(state.turnId);
  }

  function startEditing() {
    const last = [...messages.querySelectorAll('.msg--user:not(.msg--previous) .msg__bubble')].pop();
    if (!last || state.busy) return;
    state.editing = true;
    input.value = last.innerText.trim();
    autosize();
    hint.textContent = EDIT_HINT;
    input.focus();
  }

  function stopEditing() {
    state.editing = false;
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
    const title = text.replace(/\s+/g, ' ').trim().slice(0, TITLE_LENGTH).trim();
    inner.prepend(el(panel ? 'h3' : 'h1', { class: 'chat__title' }, title));
    // The panel lives beside a host page: it tells the page instead of taking its address and title.
    chat.dispatchEvent(new CustomEvent('assistant:conversation', { bubbles: true, detail: { conversationId } }));
    if (panel) return;
    window.history.replaceState(null, '', `/c/${conversationId}/`);
    document.title = `${title} · ${gettext('Assistant')}`;
  }

  // --- Following a turn --------------------------------------------------

  function liveBlock(turnId) {
    let block = byData(messages, 'turn-id', turnId);
    if (!block) {
      block = el('article', { class: 'msg msg--assistant', 'data-turn-id': turnId, 'aria-label': gettext('Assistant') },
        el('h2', { class: 'visually-hidden' }, gettext('The assistant replied')),
        el('div', { class: 'msg__avatar', 'aria-hidden': 'true' }),
        el('div', { class: 'msg__body', 'data-parts': '' },
          el('p', { class: 'live-waiting', 'data-waiting': '' }, WAITING)));
      // A regenerated reply is the newest version of its set; an edited message's reply goes in its version.
      if (!addLiveVersion(messages, block)) (currentVersionOf(messages) ?? messages).append(block);
    }
    block.classList.add('is-live');
    block.setAttribute('aria-busy', 'true'); // screen readers wait for the whole reply (announced at the end)
    return block;
  }

  function part(block, messageId) {
    let node = byData(block, 'message-id', messageId);
    if (!node) {
      node = el('div', { class: 'part', 'data-message-id': messageId, 'data-status': 'streaming' },
        el('div', { class: 'prose is-streaming', 'data-text': '' }),
        el('div', { class: 'tools', 'data-tools': '' }));
      block.querySelector('[data-parts]').append(node);
    }
    return node;
  }

  function toolRow(node, { toolCallId, name, input: toolInput }) {
    const tools = node.querySelector('[data-tools]');
    let row = byData(tools, 'tool-call-id', toolCallId);
    if (row) return row;
    row = el('details', { class: 'tool', 'data-tool-call-id': toolCallId },
      el('summary', { class: 'tool__summary' },
        el('span', { class: 'tool__icon', 'aria-hidden': 'true' }),
        el('span', { class: 'tool__title' }, humanize(name)),
        el('code', { class: 'tool__name' }, name),
        el('span', { class: 'tool__state', 'data-tool-state': '' }, gettext('Running…'))),
      el('div', { class: 'tool__body' },
        el('h4', { class: 'tool__label' }, gettext('Input')),
        el('pre', { class: 'code', 'data-tool-input': '' }, pretty(toolInput)),
        el('h4', { class: 'tool__label' }, gettext('Result')),
        el('p', { class: 'muted small', 'data-tool-result': '' }, gettext('Waiting for the result…'))));
    tools.append(row);
    return row;
  }

  function follow(turnId) {
    state.turnId = turnId;
    const block = liveBlock(turnId);
    let attempts = 0;
    let ended = false;
    let lastEventId = ''; // a reopened stream resumes after it instead of replaying the turn

    const handlers = {
      message_started: ({ messageId }) => {
        // Also sent again when the stream is reopened: start that text afresh.
        block.querySelector('[data-waiting]')?.remove();
        const text = part(block, messageId).querySelector('[data-text]');
        text.textContent = '';
        text.classList.add('is-streaming');
      },
      text: ({ messageId, delta }) => keepPinned(() => {
        part(block, messageId).querySelector('[data-text]').append(delta);
      }),
      tool_call_started: (data) => keepPinned(() => toolRow(part(block, data.messageId), data)),
      tool_call_finished: (data) => {
        const row = toolRow(part(block, data.messageId), data);
        const awaiting = !data.isError && /"status":\s*"awaiting_confirmation"/.test(data.resultPreview);
        row.classList.toggle('tool--error', data.isError);
        row.classList.toggle('tool--proposed', awaiting);
        row.querySelector('[data-tool-state]').textContent = data.isError ? gettext('Error') : awaiting ? gettext('Awaits your confirmation') : gettext('Done');
        row.querySelector('[data-tool-result]').replaceWith(
          el('pre', { class: 'code', 'data-tool-result': '' }, pretty(data.resultPreview)));
      },
      card_proposed: (card) => { attention?.cardWaiting(); insertCard(block, card); },
    };

    // A dropped stream: the browser reconnects by itself (sending Last-Event-ID)
    // while it can; once it gives up (the server down or answering an error), it
    // is reopened here with a growing delay for as long as the turn runs. Each
    // drop also asks the turn's status, so a turn that ended meanwhile ends here
    // too: the page never stays in "replying…".
    let source = null;
    const end = (data) => {
      if (ended) return;
      ended = true;
      source?.close();
      if (!banner.hidden && bannerText.textContent === RECONNECTING) hideBanner();
      finish(data);
    };
    const endIfEnded = async () => {
      const response = await api('GET', `/api/turns/${encodeURIComponent(turnId)}`);
      if (response.ok && ENDED.includes(response.data.status)) end({ status: response.data.status });
    };
    handlers.turn_ended = end;
    // A reply that does not start: the server says whether the service is down
    // (its workers' heartbeats, assistant/service.py), asked until the reply starts.
    const checkService = async () => {
      if (ended || !block.querySelector('[data-waiting]')) return;
      const response = await api('GET', `/api/turns/${encodeURIComponent(turnId)}`);
      const waiting = block.querySelector('[data-waiting]');
      if (ended || !waiting) return;
      const down = Boolean(response.ok && response.data.serviceDown);
      if (down && !waiting.hasAttribute('data-service-down')) announce(SERVICE_DOWN);
      waiting.toggleAttribute('data-service-down', down);
      waiting.textContent = down ? SERVICE_DOWN : WAITING;
      window.setTimeout(checkService, SERVICE_RECHECK_MS);
    };
    window.setTimeout(checkService, (Number(chat.dataset.serviceDownSeconds) || 15) * 1000);
    signal.addEventListener('abort', () => { ended = true; source?.close(); });
    const open = () => {
      if (ended) return;
      const resume = lastEventId ? `?lastEventId=${encodeURIComponent(lastEventId)}` : '';
      source = new EventSource(`/api/turns/${encodeURIComponent(turnId)}/events${resume}`);
      for (const [name, handle] of Object.entries(handlers)) {
        source.addEventListener(name, (event) => {
          if (event.lastEventId) lastEventId = event.lastEventId;
          handle(JSON.parse(event.data));
        });
      }
      source.onopen = () => {
        attempts = 0;
        if (bannerText.textContent === RECONNECTING) hideBanner();
      };
      source.onerror = async () => {
        if (ended) return;
        const closed = source.readyState === EventSource.CLOSED;
        if (closed) source.close();
        await endIfEnded();
        if (ended) return;
        attempts += 1;
        if (attempts >= 2) showBanner(RECONNECTING);
        if (closed) window.setTimeout(open, Math.min(700 * attempts, 8000));
      };
    };
    open();
  }

  async function insertCard(block, card) {
    if (document.getElementById(`card-${card.id}`)) return;
    let node;
    try {
      node = parseFragment(await fragment(`/cards/${encodeURIComponent(card.id)}/`)).firstElementChild;
    } catch {
      return; // shown when the turn ends and the conversation is re-read
    }
    if (!node || document.getElementById(`card-${card.id}`)) return;
    keepPinned(() => {
      const row = card.toolCallId ? byData(block, 'tool-call-id', card.toolCallId) : null;
      if (row) row.after(node);
      else block.querySelector('[data-parts] > .part:last-child [data-tools]')?.append(node);
    });
  }

  async function finish(ended) {
    tell('turn_ended', ended.turnId ?? state.turnId);
    await refreshMessages();
    setBusy(false);
    attention?.ended(ended.status);
    refreshSidebar();
    refreshCredits();
    // Focus stays where the person put it (an Enter must not send a draft by surprise).
    announce(ENDED_ANNOUNCEMENTS[ended.status] ?? replyAnnouncement());
  }

  // The finished reply's first sentence (of 20 characters at least), for the live region.
  function replyAnnouncement() {
    const reply = [...messages.querySelectorAll('.msg--assistant')].pop();
    const text = [...(reply?.querySelectorAll('[data-text]') ?? [])].map((node) => node.textContent).join(' ')
      .replace(/\s+/g, ' ').trim();
    if (!text) return gettext('The assistant replied.');
    const sentence = text.match(/^[\s\S]{20,}?[.!?](?=\s|$)/)?.[0] ?? text;
    return interpolate(gettext('The assistant replied: %(sentence)s'), { sentence: sentence.slice(0, 200) });
  }

  async function refreshMessages() {
    if (!state.conversationId) return;
    let html;
    try {
      html = await fragment(`/c/${state.conversationId}/messages`);
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
      list.replaceChildren(parseFragment(await fragment(`/conversations/list?${query}`)));
    } catch { /* the list stays as it was */ }
  }

  async function refreshCredits() {
    const response = await api('GET', '/api/credits');
    if (!response.ok) return;
    const pill = document.querySelector('[data-credits]');
    const credits = response.data;
    // Under a cap the pill counts the person's credits (the page says "of your N"); the panel's line too.
    const left = credits.person?.remainingCredits ?? credits.remainingCredits;
    document.querySelectorAll('[data-credits-value]').forEach((node) => { node.textContent = left; });
    pill.classList.toggle('pill--empty', left <= 0);
    document.querySelector('[data-credits-details]').textContent = interpolate(
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
    if (data.type === 'turn_started') refreshMessages().then(() => { setBusy(true); follow(data.turnId); });
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
    follow(messages.dataset.runningTurn);
  }
  toBottom();
  return { refreshMessages, refreshSidebar, destroy: () => lifetime.abort() };
}
