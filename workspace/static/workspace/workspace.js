// The workspace's pages hear the assistant beside them: when a confirmed card
// changed their data (`assistant:effect`, sent by the panel's component), the
// page shows the change without a reload.

import { gettext } from '../assistant/i18n.js';

// Which list each tool's effect changes (data-live-list on the page).
const LISTS = { delete_note: 'notes', create_note: 'notes', send_email: 'sent' };

function say(text) {
  const status = document.querySelector('[data-workspace-status]');
  if (!status) return;
  status.textContent = '';
  window.setTimeout(() => { status.textContent = text; }, 50);
}

// The page's list as the server has it now (the same page, its list only).
async function refreshList(name) {
  const list = document.querySelector(`[data-live-list="${name}"]`);
  if (!list) return false;
  let response;
  try {
    response = await fetch(window.location.href, { headers: { Accept: 'text/html' }, credentials: 'same-origin' });
  } catch {
    return false;
  }
  if (!response.ok) return false;
  const page = new DOMParser().parseFromString(await response.text(), 'text/html');
  const fresh = page.querySelector(`[data-live-list="${name}"]`);
  if (!fresh) return false;
  list.replaceChildren(...fresh.childNodes);
  return true;
}

function noteGone(id) {
  const note = document.querySelector(`[data-note="${CSS.escape(String(id))}"]`);
  if (!note) return;
  note.querySelector('[data-note-gone]').hidden = false;
  note.querySelector('[data-note-edit]')?.remove();
}

document.addEventListener('assistant:effect', async ({ detail }) => {
  if (detail.tool === 'delete_note') {
    noteGone(detail.object?.id);
    if (await refreshList('notes')) say(gettext('The note was deleted; the list is up to date.'));
  } else if (LISTS[detail.tool] && await refreshList(LISTS[detail.tool])) {
    say(gettext('The list is up to date.'));
  }
});
