// The chat page's keyboard shortcuts (the panel of a host page has none: the
// host's keys stay the host's), the bindings of ChatGPT and its peers:
//   Ctrl/⌘+Shift+O  a new conversation        Ctrl/⌘+K  search the conversations
//   Shift+Esc or /  the message box           ?         the sheet listing them
// `/` and `?` are characters while typing in a field; the others work there too.
// The sheet also opens from "Keyboard shortcuts" in the top bar's account menu,
// for whoever does not know the `?`.

import { pageUrl } from './api.js';

const typing = (target) => Boolean(target.closest?.('input, textarea, select, [contenteditable]'));
const plain = (event) => !event.ctrlKey && !event.metaKey && !event.altKey;
const mac = () => /Mac|iPhone|iPad/.test(navigator.platform);

function searchConversations() {
  const input = document.querySelector('[data-sidebar-search-input]');
  if (!input) return;
  // On a narrow screen the list is a drawer: open it first (it makes the page behind inert).
  const toggle = document.querySelector('[data-drawer-open]');
  if (toggle?.checkVisibility() && toggle.getAttribute('aria-expanded') !== 'true') toggle.click();
  input.focus();
  input.select();
}

// A modal <dialog> keeps the page behind out of reach, but Tab still leaves it for
// the browser's own bar: here Tab goes round the sheet's controls.
function trapFocus(dialog) {
  dialog.addEventListener('keydown', (event) => {
    if (event.key !== 'Tab') return;
    const controls = [...dialog.querySelectorAll('a[href], button:not([disabled]), input, select, textarea')];
    const [first, last] = [controls[0], controls[controls.length - 1]];
    if (!first) return;
    const leaving = event.shiftKey ? document.activeElement === first : document.activeElement === last;
    if (!leaving && dialog.contains(document.activeElement)) return;
    event.preventDefault();
    (event.shiftKey ? last : first).focus();
  });
}

export function initShortcuts() {
  const sheet = document.querySelector('[data-shortcuts-dialog]');
  const composer = document.querySelector('[data-chat] [data-composer-input]');
  if (!sheet || !composer) return;
  trapFocus(sheet);
  // Closed (Escape, its button), the sheet gives focus back to what opened it.
  let opener = null;
  const openSheet = () => { opener = document.activeElement; sheet.showModal(); };
  sheet.addEventListener('close', () => { opener?.focus(); opener = null; });
  document.querySelector('[data-shortcuts-open]')?.addEventListener('click', openSheet);
  if (mac()) sheet.querySelectorAll('[data-mod-key]').forEach((key) => { key.textContent = '⌘'; });
  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.isComposing || document.querySelector('dialog[open]')) return;
    const mod = (event.ctrlKey || event.metaKey) && !event.altKey;
    const key = event.key.toLowerCase();
    let action = null;
    if (mod && event.shiftKey && key === 'o') action = () => window.location.assign(document.querySelector('[data-new-conversation]')?.href ?? pageUrl());
    else if (mod && !event.shiftKey && key === 'k') action = searchConversations;
    else if (event.key === 'Escape' && event.shiftKey && plain(event)) action = () => composer.focus();
    else if (event.key === '/' && plain(event) && !typing(event.target)) action = () => composer.focus();
    else if (event.key === '?' && plain(event) && !typing(event.target)) action = openSheet;
    if (!action) return;
    event.preventDefault();
    action();
  });
}
