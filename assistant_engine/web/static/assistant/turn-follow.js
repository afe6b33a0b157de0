// Following a turn (for chat.js): the live reply block, its text and tool rows
// as the turn's SSE stream sends them, its cards, and the stream's reconnection.
// `ctx` is the component's side: its messages, banner, live region and finish.

import { announceEffect, api, apiUrl, el, fragment, pageUrl, parseFragment } from './api.js';
import { gettext } from './i18n.js';
import { addLiveVersion, currentVersionOf } from './versions.js';

const WAITING = gettext('Waiting for the assistant to start…');
const SERVICE_DOWN = gettext("The assistant service isn't answering right now; your message is kept and runs when it is back.");
const SERVICE_RECHECK_MS = 5000;
const ENDED = ['done', 'failed', 'cancelled'];
const RECONNECTING = gettext('The connection to the server was lost. Reconnecting…');

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

export const byData = (root, name, value) => root.querySelector(`[data-${name}="${CSS.escape(value)}"]`);

export function liveBlock(ctx, turnId) {
  let block = byData(ctx.messages, 'turn-id', turnId);
  if (!block) {
    block = el('article', { class: 'msg msg--assistant', 'data-turn-id': turnId, 'aria-label': gettext('Assistant') },
      el('h2', { class: 'visually-hidden' }, gettext('The assistant replied')),
      el('div', { class: 'msg__avatar', 'aria-hidden': 'true' }),
      el('div', { class: 'msg__body', 'data-parts': '' },
        el('p', { class: 'live-waiting', 'data-waiting': '' }, WAITING)));
    // A regenerated reply is the newest version of its set; an edited message's reply goes in its version.
    if (!addLiveVersion(ctx.messages, block)) (currentVersionOf(ctx.messages) ?? ctx.messages).append(block);
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
      el('h3', { class: 'tool__label' }, gettext('Input')),
      el('pre', { class: 'code', 'data-tool-input': '' }, pretty(toolInput)),
      el('h3', { class: 'tool__label' }, gettext('Result')),
      el('p', { class: 'muted small', 'data-tool-result': '' }, gettext('Waiting for the result…'))));
  tools.append(row);
  return row;
}

export function followTurn(ctx, turnId) {
  ctx.setTurn(turnId);
  const block = liveBlock(ctx, turnId);
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
    text: ({ messageId, delta }) => ctx.keepPinned(() => {
      part(block, messageId).querySelector('[data-text]').append(delta);
    }),
    tool_call_started: (data) => ctx.keepPinned(() => toolRow(part(block, data.messageId), data)),
    tool_call_finished: (data) => {
      const row = toolRow(part(block, data.messageId), data);
      const awaiting = !data.isError && /"status":\s*"awaiting_confirmation"/.test(data.resultPreview);
      row.classList.toggle('tool--error', data.isError);
      row.classList.toggle('tool--proposed', awaiting);
      row.querySelector('[data-tool-state]').textContent = data.isError ? gettext('Error') : awaiting ? gettext('Awaits your confirmation') : gettext('Done');
      row.querySelector('[data-tool-result]').replaceWith(
        el('pre', { class: 'code', 'data-tool-result': '' }, pretty(data.resultPreview)));
      if (data.effect) announceEffect(ctx.chat, { tool: data.name, object: data.effect });
    },
    card_proposed: (card) => { ctx.attention.cardWaiting(); insertCard(ctx, block, card); },
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
    if (ctx.bannerSays(RECONNECTING)) ctx.hideBanner();
    ctx.finish(data);
  };
  const endIfEnded = async () => {
    const response = await api('GET', apiUrl(`turns/${encodeURIComponent(turnId)}`));
    if (response.ok && ENDED.includes(response.data.status)) end({ status: response.data.status });
  };
  handlers.turn_ended = end;
  // A reply that does not start: the server says whether the service is down
  // (its workers' heartbeats, assistant/service.py), asked until the reply starts.
  const checkService = async () => {
    if (ended || !block.querySelector('[data-waiting]')) return;
    const response = await api('GET', apiUrl(`turns/${encodeURIComponent(turnId)}`));
    const waiting = block.querySelector('[data-waiting]');
    if (ended || !waiting) return;
    const down = Boolean(response.ok && response.data.serviceDown);
    if (down && !waiting.hasAttribute('data-service-down')) ctx.announce(SERVICE_DOWN);
    if (down !== waiting.hasAttribute('data-service-down')) ctx.serviceDown(down);
    waiting.toggleAttribute('data-service-down', down);
    waiting.textContent = down ? SERVICE_DOWN : WAITING;
    window.setTimeout(checkService, SERVICE_RECHECK_MS);
  };
  window.setTimeout(checkService, (Number(ctx.chat.dataset.serviceDownSeconds) || 15) * 1000);
  ctx.signal.addEventListener('abort', () => { ended = true; source?.close(); });
  const open = () => {
    if (ended) return;
    const resume = lastEventId ? `?lastEventId=${encodeURIComponent(lastEventId)}` : '';
    source = new EventSource(apiUrl(`turns/${encodeURIComponent(turnId)}/events${resume}`));
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (event) => {
        if (event.lastEventId) lastEventId = event.lastEventId;
        handle(JSON.parse(event.data));
      });
    }
    source.onopen = () => {
      attempts = 0;
      if (ctx.bannerSays(RECONNECTING)) ctx.hideBanner();
    };
    source.onerror = async () => {
      if (ended) return;
      const closed = source.readyState === EventSource.CLOSED;
      if (closed) source.close();
      await endIfEnded();
      if (ended) return;
      attempts += 1;
      if (attempts >= 2) ctx.showBanner(RECONNECTING);
      if (closed) window.setTimeout(open, Math.min(700 * attempts, 8000));
    };
  };
  open();
}

async function insertCard(ctx, block, card) {
  if (document.getElementById(`card-${card.id}`)) return;
  let node;
  try {
    node = parseFragment(await fragment(pageUrl(`cards/${encodeURIComponent(card.id)}/`))).firstElementChild;
  } catch {
    return; // shown when the turn ends and the conversation is re-read
  }
  if (!node || document.getElementById(`card-${card.id}`)) return;
  ctx.keepPinned(() => {
    const row = card.toolCallId ? byData(block, 'tool-call-id', card.toolCallId) : null;
    if (row) row.after(node);
    else block.querySelector('[data-parts] > .part:last-child [data-tools]')?.append(node);
  });
}
