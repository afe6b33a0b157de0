// A conversation's title as the page shows it: the first message's words without
// their Markdown (as the server derives it, conversations/titles.py), and, once the
// server has it, the server's own (it follows an edit of the first message, a rename).

import { gettext } from './i18n.js';

const TITLE_LENGTH = 60;

// The words of a Markdown text: no fences, backticks, emphasis marks, heading or list markers, link addresses.
export function plainTitle(text) {
  return text
    .replace(/^\s{0,3}(`{3,}|~{3,}).*$/gm, ' ')
    .replace(/!?\[([^\]\n]*)\]\([^)\n]*\)/g, '$1')
    .replace(/^\s{0,3}(?:#{1,6}|>|[-*+]|\d{1,9}[.)])\s+/gm, '')
    .replace(/(\*\*|__|~~|`|\*|_)/g, '')
    .replace(/\s+/g, ' ').trim().slice(0, TITLE_LENGTH).trim();
}

// The title the sidebar (freshly rendered by the server) gives the current conversation, on the page too.
export function followTitle(chat, { panel }) {
  const id = chat.dataset.conversationId;
  const item = id && document.querySelector(`[data-conversation-item="${CSS.escape(id)}"] [data-conversation-title]`);
  const heading = chat.querySelector('.chat__title');
  const title = item?.textContent.trim();
  if (!title || !heading || heading.textContent === title) return;
  heading.textContent = title;
  if (!panel) document.title = `${title} · ${gettext('Assistant')}`;
}
