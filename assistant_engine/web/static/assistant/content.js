// Readable content, on the server's rendering of the messages: a Copy button on
// each reply and each code block (with its language), tables in a focusable
// region that scrolls sideways, maths typeset (math.js), long messages
// collapsed behind "Show more". Code arrives coloured by the server.
// Text only goes in with textContent; nothing here parses HTML.

import { el } from './api.js';
import { gettext, interpolate } from './i18n.js';
import { renderMath, textWithTex } from './math.js';

const LONG_PX = 480; // taller than this: collapsed (CSS clamps at the same height)

function enhanceCode(pre) {
  const language = pre.dataset.lang ?? '';
  const bar = el('div', { class: 'codeblock__bar' },
    el('span', { class: 'codeblock__lang' }, language || gettext('Code')),
    el('button', { type: 'button', class: 'btn btn--ghost btn--small', 'data-copy': 'code' },
      language ? interpolate(gettext('Copy %(language)s code'), { language }) : gettext('Copy code')));
  const block = el('div', { class: 'codeblock' });
  pre.replaceWith(block);
  block.append(bar, pre);
  // A long line scrolls sideways (a narrow screen, the person's own message too): the keyboard must reach it.
  pre.tabIndex = 0;
}

function enhanceTable(table) {
  const region = el('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': gettext('Table (scrolls sideways)') });
  table.replaceWith(region);
  region.append(table);
}

function enhanceReply(article) {
  const body = article.querySelector('[data-parts]');
  const hasText = [...article.querySelectorAll('[data-text]')].some((node) => node.textContent.trim());
  if (!body || !hasText) return;
  body.append(el('div', { class: 'msg__actions' },
    el('button', { type: 'button', class: 'btn btn--ghost btn--small', 'data-copy': 'reply' }, gettext('Copy reply'))));
}

function collapseIfLong(prose) {
  // Once; a hidden version measures 0, so versions.js asks again when it is shown.
  if (prose.scrollHeight <= LONG_PX || 'long' in prose.dataset) return;
  prose.dataset.long = '';
  prose.classList.add('is-clamped');
  prose.id ||= `long-${Math.random().toString(36).slice(2)}`;
  prose.after(el('button', {
    type: 'button', class: 'btn btn--ghost btn--small show-more', 'data-show-more': '', 'aria-expanded': 'false',
    'aria-controls': prose.id,
  }, gettext('Show more')));
}

export function enhanceMessages(root) {
  root.querySelectorAll('.prose pre').forEach(enhanceCode);
  root.querySelectorAll('.prose table').forEach(enhanceTable);
  root.querySelectorAll('.msg--assistant').forEach(enhanceReply);
  renderMath(root); // before measuring what is long
  collapseLongIn(root);
}

export function collapseLongIn(root) {
  root.querySelectorAll('.msg__bubble.prose, .msg--assistant [data-text]').forEach(collapseIfLong);
}

function copiedText(button) {
  if (button.dataset.copy === 'code') return button.closest('.codeblock').querySelector('pre').textContent;
  const texts = [...button.closest('.msg--assistant').querySelectorAll('[data-text]')].map((node) => textWithTex(node).trim());
  return texts.filter(Boolean).join('\n\n');
}

export function initContent() {
  document.addEventListener('click', async (event) => {
    const copy = event.target.closest('[data-copy]');
    if (copy) {
      const label = copy.textContent;
      try {
        await navigator.clipboard.writeText(copiedText(copy));
        copy.textContent = gettext('Copied');
      } catch {
        copy.textContent = gettext('Copy failed');
      }
      window.setTimeout(() => { copy.textContent = label; }, 2000);
      return;
    }
    const more = event.target.closest('[data-show-more]');
    if (more) {
      const prose = document.getElementById(more.getAttribute('aria-controls'));
      const open = prose.classList.toggle('is-clamped') === false;
      more.setAttribute('aria-expanded', String(open));
      more.textContent = open ? gettext('Show less') : gettext('Show more');
    }
  });
}
