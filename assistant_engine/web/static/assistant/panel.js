// The assistant panel of a host page ({% assistant_panel %}): opens and closes
// beside the page (a full-height sheet on a narrow screen), starts a new
// conversation, and keeps its state on the server (the session), so the next
// page and a reload show the same conversation, open or closed as it was.
// The conversation itself is the <assistant-chat> component inside.

import { csrfToken, fragment, pageUrl, parseFragment } from './api.js';

const NARROW = '(max-width: 820px)';

// Saved with keepalive: a click on a link right after must not lose it.
function saveState(url, state) {
  return fetch(url, {
    method: 'POST', keepalive: true, credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-CSRFToken': csrfToken() },
    body: JSON.stringify(state),
  }).catch(() => null);
}

export function initPanel() {
  const panel = document.querySelector('[data-assistant-panel]');
  const launcher = document.querySelector('[data-assistant-launcher]');
  if (!panel || !launcher) return;
  const narrow = window.matchMedia(NARROW);
  const isOpen = () => !panel.hidden;
  const composer = () => panel.querySelector('[data-composer-input]');

  // As a sheet, the panel is all there is: the page behind can't be reached.
  const behind = () => [...document.body.children, ...(panel.parentElement?.children ?? [])]
    .filter((node) => node !== panel && !node.contains(panel));
  const sheet = () => {
    const covering = isOpen() && narrow.matches;
    behind().forEach((node) => { if (!node.matches('script, [data-assistant-launcher]')) node.inert = covering; });
  };

  function show(open) {
    panel.hidden = !open;
    launcher.hidden = open;
    launcher.setAttribute('aria-expanded', String(open));
    sheet();
    if (open) composer()?.focus();
    else launcher.focus();
    saveState(panel.dataset.stateUrl, { open });
  }

  async function newConversation() {
    await saveState(panel.dataset.stateUrl, { conversationId: null });
    let html;
    try {
      html = await fragment(panel.dataset.chatUrl);
    } catch {
      return;
    }
    const fresh = parseFragment(html).querySelector('assistant-chat');
    panel.querySelector('assistant-chat').replaceWith(fresh);
    panel.querySelector('[data-panel-chat-page]')?.setAttribute('href', pageUrl());
    composer()?.focus();
  }

  launcher.addEventListener('click', () => show(true));
  panel.addEventListener('click', (event) => {
    if (event.target.closest('[data-panel-close]')) show(false);
    const start = event.target.closest('[data-panel-new], [data-banner-new]');
    if (start) { event.preventDefault(); newConversation(); }
  });
  panel.addEventListener('keydown', (event) => {
    // A running reply takes Escape first (the component stops it).
    if (event.key === 'Escape' && !event.defaultPrevented && !document.querySelector('dialog[open]')) show(false);
  });
  panel.addEventListener('assistant:conversation', ({ detail }) => {
    saveState(panel.dataset.stateUrl, { conversationId: detail.conversationId });
    panel.querySelector('[data-panel-chat-page]')?.setAttribute('href', pageUrl(`c/${detail.conversationId}/`));
  });
  narrow.addEventListener('change', sheet);
  sheet();
}
