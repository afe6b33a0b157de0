// Everything around the chat: the drawer, deleting a conversation, the cards'
// Confirm and Cancel, long tool results, older conversations.

import { announceEffect, api, apiUrl, fragment, pageUrl, parseFragment } from './api.js';
import { gettext, interpolate } from './i18n.js';

const CARD_STATES = { confirmed: gettext('Confirmed'), cancelled: gettext('Cancelled'), expired: gettext('Expired'),
  failed: gettext('Failed'), outcome_unknown: gettext('Outcome unknown') };
// What the live region says once a card is decided.
const CARD_ANNOUNCEMENTS = { confirmed: gettext('Card confirmed.'), cancelled: gettext('Card cancelled.'),
  expired: gettext('Card expired.'), failed: gettext('Card failed.'), outcome_unknown: gettext('Card outcome unknown.') };
const CARD_ERRORS = {
  stale: gettext('What this card would do has changed since it was proposed, so nothing was done. Ask the assistant again.'),
  expired: gettext('This card has expired, so nothing was done. Ask the assistant again if you still want it.'),
  decided: gettext('This card was already decided.'),
  repeat: gettext('An identical action was already done in this conversation: the card now says so. Use “Confirm again” to do it a second time.'),
};

function initDrawer() {
  const sidebar = document.querySelector('[data-sidebar]');
  const toggle = document.querySelector('[data-drawer-open]');
  const backdrop = document.querySelector('.backdrop');
  if (!sidebar || !toggle) return;
  const isOpen = () => sidebar.classList.contains('is-open');
  // While the drawer is open, the page behind it can't be reached with the keyboard.
  const behind = [document.querySelector('[data-chat]'), document.querySelector('.topbar')];
  const setBehindInert = (inert) => behind.forEach((node) => { if (node) node.inert = inert; });
  const open = () => {
    setBehindInert(true);
    sidebar.classList.add('is-open');
    backdrop.hidden = false;
    toggle.setAttribute('aria-expanded', 'true');
    sidebar.querySelector('a, button')?.focus();
  };
  const close = () => {
    if (!isOpen()) return;
    setBehindInert(false);
    sidebar.classList.remove('is-open');
    backdrop.hidden = true;
    toggle.setAttribute('aria-expanded', 'false');
    toggle.focus();
  };
  toggle.addEventListener('click', () => (isOpen() ? close() : open()));
  document.querySelectorAll('[data-drawer-close]').forEach((node) => node.addEventListener('click', close));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && isOpen() && !document.querySelector('dialog[open]')) close();
  });
}

function initDelete() {
  const dialog = document.querySelector('[data-delete-dialog]');
  if (!dialog) return;
  const name = dialog.querySelector('[data-delete-name]');
  const error = dialog.querySelector('[data-delete-error]');
  const confirm = dialog.querySelector('[data-delete-confirm]');
  let target = null;

  document.addEventListener('click', (event) => {
    const button = event.target.closest('[data-delete-conversation]');
    if (!button) return;
    target = button.dataset.deleteConversation;
    name.textContent = button.dataset.title;
    error.hidden = true;
    confirm.disabled = false;
    dialog.showModal();
  });

  confirm.addEventListener('click', async () => {
    if (!target) return;
    confirm.disabled = true;
    const response = await api('DELETE', apiUrl(`conversations/${encodeURIComponent(target)}`));
    confirm.disabled = false;
    if (!response.ok && response.status !== 404) {
      // 409 while the assistant is replying: say why and leave it.
      error.textContent = response.data.detail;
      error.hidden = false;
      return;
    }
    const current = document.querySelector('[data-chat]')?.dataset.conversationId;
    if (target === current) {
      window.location.assign(pageUrl());
      return;
    }
    document.querySelector(`[data-conversation-item="${CSS.escape(target)}"]`)?.remove();
    target = null;
    dialog.close();
    document.querySelector('[data-new-conversation]')?.focus();
    const status = document.querySelector('[data-announcer]');
    if (status) status.textContent = gettext('Conversation deleted.');
  });
}

async function decideCard(button) {
  const card = button.closest('[data-card-id]');
  const id = card.dataset.cardId;
  const action = button.dataset.cardAction;
  const buttons = card.querySelectorAll('[data-card-action]');
  buttons.forEach((node) => { node.disabled = true; });
  button.setAttribute('aria-busy', 'true');
  const url = apiUrl(`cards/${encodeURIComponent(id)}/${action}`);
  // "Confirm again" on a card that says it repeats an action already done.
  const repeat = 'cardRepeat' in card.dataset ? { acknowledgeRepeat: true } : {};
  const response = await api('POST', url, action === 'confirm' ? { hash: card.dataset.cardHash, ...repeat } : {});
  const problem = response.ok ? '' : (CARD_ERRORS[response.data.code] ?? response.data.detail);
  let fresh = null;
  try {
    fresh = parseFragment(await fragment(pageUrl(`cards/${encodeURIComponent(id)}/`))).firstElementChild;
  } catch { /* keep the card shown */ }
  const shown = fresh ?? card;
  if (fresh) {
    card.replaceWith(fresh);
    const row = fresh.previousElementSibling;
    const state = CARD_STATES[fresh.dataset.cardStatus];
    if (row?.matches('[data-tool-call-id]') && state) {
      row.classList.remove('tool--proposed');
      row.querySelector('[data-tool-state]').textContent = state;
    }
  }
  else buttons.forEach((node) => { node.disabled = false; });
  button.removeAttribute('aria-busy');
  // The outcome as the card now says it (what was done, or that nothing was): the
  // reply above keeps its words, so the card is where the decision is told.
  const said = shown.querySelector('[data-card-outcome]')?.textContent.replace(/\s+/g, ' ').trim() ?? '';
  announce([CARD_ANNOUNCEMENTS[shown.dataset.cardStatus] ?? '', said, problem].filter(Boolean).join(' '));
  if (problem) {
    const slot = shown.querySelector('[data-card-error]');
    slot.textContent = problem;
    slot.hidden = false;
  }
  // The buttons are gone: keep keyboard focus on the card that replaced them.
  shown.tabIndex = -1;
  shown.focus({ preventScroll: true });
  if (response.ok && response.data.status === 'confirmed') {
    const card = response.data;
    announceEffect(shown, { tool: card.toolName, cardId: card.id, object: card.result, input: card.input });
  }
}

// The credits pill opens its breakdown (used, reserved, granted, month).
function initCredits() {
  const button = document.querySelector('[data-credits]');
  const details = document.querySelector('[data-credits-details]');
  if (!button || !details) return;
  const show = (open) => { details.hidden = !open; button.setAttribute('aria-expanded', String(open)); };
  button.addEventListener('click', () => show(details.hidden));
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !details.hidden) { show(false); button.focus(); }
  });
}

function announce(text) {
  const status = document.querySelector('[data-announcer]');
  if (!status) return;
  status.textContent = '';
  window.setTimeout(() => { status.textContent = text; }, 50);
}

function initClicks() {
  document.addEventListener('click', async (event) => {
    const cardButton = event.target.closest('[data-card-action]');
    if (cardButton) {
      decideCard(cardButton);
      return;
    }
    const toggle = event.target.closest('[data-result-toggle]');
    if (toggle) {
      const result = toggle.closest('[data-result]');
      const collapsed = result.classList.toggle('is-collapsed');
      toggle.setAttribute('aria-expanded', String(!collapsed));
      if (!toggle.dataset.moreLabel) toggle.dataset.moreLabel = toggle.textContent.trim();
      toggle.textContent = collapsed ? toggle.dataset.moreLabel : gettext('Show less');
      return;
    }
    const more = event.target.closest('[data-sidebar-more]');
    if (more) {
      const list = document.querySelector('[data-sidebar-list]');
      const current = document.querySelector('[data-chat]')?.dataset.conversationId ?? '';
      const q = document.querySelector('[data-sidebar-search-input]')?.value.trim() ?? '';
      const query = new URLSearchParams({ current, pages: more.dataset.sidebarMore, q });
      list.replaceChildren(parseFragment(await fragment(pageUrl(`conversations/list?${query}`))));
    }
  });
}

// Search over the sidebar: the list is the server's, for the words typed (after a short pause).
function initSearch() {
  const form = document.querySelector('[data-sidebar-search]');
  const list = document.querySelector('[data-sidebar-list]');
  if (!form || !list) return;
  const input = form.querySelector('input');
  let timer = 0;
  const run = async () => {
    const current = document.querySelector('[data-chat]')?.dataset.conversationId ?? '';
    const query = new URLSearchParams({ current, pages: '1', q: input.value.trim() });
    try {
      list.replaceChildren(parseFragment(await fragment(pageUrl(`conversations/list?${query}`))));
    } catch { /* the list stays as it was */ }
  };
  form.addEventListener('submit', (event) => { event.preventDefault(); window.clearTimeout(timer); run(); });
  input.addEventListener('input', () => { window.clearTimeout(timer); timer = window.setTimeout(run, 250); });
}

// Rename in place: Enter saves (PATCH), Escape cancels; the list and the page title follow.
function initRename() {
  document.addEventListener('click', (event) => {
    const button = event.target.closest('[data-rename-conversation]');
    if (!button) return;
    const item = button.closest('[data-conversation-item]');
    const link = item.querySelector('.conv__link');
    const field = document.createElement('input');
    field.className = 'conv__rename';
    field.value = button.dataset.title;
    field.maxLength = 200;
    field.setAttribute('aria-label', gettext('New title (Enter to save, Escape to cancel)'));
    link.hidden = true;
    item.prepend(field);
    field.focus();
    field.select();
    const close = () => { field.remove(); link.hidden = false; button.focus(); };
    field.addEventListener('keydown', async (key) => {
      if (key.key === 'Escape') { key.preventDefault(); key.stopPropagation(); close(); return; }
      if (key.key !== 'Enter') return;
      key.preventDefault();
      const id = button.dataset.renameConversation;
      const response = await api('PATCH', apiUrl(`conversations/${encodeURIComponent(id)}`), { title: field.value });
      if (!response.ok) { announce(response.data.detail); return; }
      const title = response.data.title;
      item.querySelector('[data-conversation-title]').textContent = title;
      button.dataset.title = title;
      button.setAttribute('aria-label', interpolate(gettext('Rename “%(title)s”'), { title }));
      item.querySelector('[data-delete-conversation]')?.setAttribute('data-title', title);
      if (document.querySelector('[data-chat]')?.dataset.conversationId === id) {
        const heading = document.querySelector('.chat__title');
        if (heading) heading.textContent = title;
        document.title = `${title} · ${gettext('Assistant')}`;
      }
      close();
      announce(gettext('Conversation renamed.'));
    });
  });
}

// The account's items behind one button, at every width: a disclosure (the bar stays one row high).
function initAccountMenu() {
  const toggle = document.querySelector('[data-account-toggle]');
  const menu = document.querySelector('[data-account-menu]');
  if (!toggle || !menu) return;
  const isOpen = () => menu.classList.contains('is-open');
  const show = (open) => { menu.classList.toggle('is-open', open); toggle.setAttribute('aria-expanded', String(open)); };
  toggle.addEventListener('click', () => {
    show(!isOpen());
    if (isOpen()) menu.querySelector('a, button:not([hidden]), select')?.focus();
  });
  // A dialog opened from the menu (the shortcuts sheet) closes first, on its own, back into the menu.
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !isOpen() || event.shiftKey || document.querySelector('dialog[open]')) return;
    show(false);
    toggle.focus();
  });
  document.addEventListener('click', (event) => {
    if (event.target.closest?.('dialog')) return;
    if (isOpen() && !menu.contains(event.target) && !toggle.contains(event.target)) show(false);
  });
}

// Dark theme: the system's choice (prefers-color-scheme) until the person presses
// the toggle; then theirs, kept in this browser.
const THEME_KEY = 'assistant:theme';

function initTheme() {
  const root = document.documentElement;
  const button = document.querySelector('[data-theme-toggle]');
  const dark = window.matchMedia('(prefers-color-scheme: dark)');
  let chosen = null;
  try { chosen = window.localStorage.getItem(THEME_KEY); } catch { /* storage off: follow the system */ }
  if (chosen === 'dark' || chosen === 'light') root.dataset.theme = chosen;
  const isDark = () => (root.dataset.theme ? root.dataset.theme === 'dark' : dark.matches);
  const show = () => button?.setAttribute('aria-pressed', String(isDark()));
  show();
  dark.addEventListener('change', show);
  button?.addEventListener('click', () => {
    root.dataset.theme = isDark() ? 'light' : 'dark';
    try { window.localStorage.setItem(THEME_KEY, root.dataset.theme); } catch { /* kept for this page only */ }
    show();
  });
}

// A language chosen applies at once (its label says so, WCAG 3.2.2): no second button
// to press. Without the script, the form's own button submits it.
function initLanguage() {
  const select = document.querySelector('[data-language-select]');
  if (!select) return;
  select.form.querySelector('[data-language-submit]').hidden = true;
  select.addEventListener('change', () => select.form.requestSubmit());
}

export function initUi() {
  initTheme();
  initLanguage();
  initAccountMenu();
  initSearch();
  initRename();
  initDrawer();
  initDelete();
  initCredits();
  initClicks();
}
