// Files to send with the next message: the paperclip, a drop on the chat, a
// paste in the composer. Each file is uploaded at once (POST /api/files: the
// server judges its type from its bytes; a PDF's text is then read by a
// worker) and shown as a chip, in the order the person added them, until it is
// sent or removed; chat.js sends the ids with the message, once all are ready. While the last message
// is edited, the chips are its files instead (each removable; none added): the
// edit sends the ids of those left, which the new version keeps.

import { api, apiUrl, el } from './api.js';
import { gettext, interpolate } from './i18n.js';

const MAX_FILES = 5;
// The server's refusals, in the person's language (other codes show the server's own words).
const REFUSALS = {
  unsupported_file_type: gettext('Only text (plain, Markdown, CSV), PDF, PNG, JPEG, GIF and WebP files can be attached.'),
  file_too_large: gettext('This file is too large to attach.'),
  empty_file: gettext('This file is empty.'),
  unreadable_pdf: gettext('This PDF cannot be read.'),
  too_many_pages: gettext('This PDF has too many pages.'),
  files_still_reading: gettext('Your other PDFs are still being read: attach this one in a moment.'),
  unattached_files_limit: gettext('Your files waiting to be sent are too large together: send or remove some first.'),
};
const size = (bytes) => (bytes < 1024 ? interpolate(gettext('%(n)s bytes'), { n: bytes })
  : bytes < 1024 * 1024 ? interpolate(gettext('%(n)s KB'), { n: Math.round(bytes / 1024) })
    : interpolate(gettext('%(n)s MB'), { n: (bytes / (1024 * 1024)).toFixed(1) }));

// The files a sent message shows (templates/web/_files.html), to keep or drop when it is edited.
export function messageFiles(list) {
  if (!list?.classList.contains('msg__files')) return [];
  return [...list.querySelectorAll('[data-file-id]')].map((item) => ({
    id: item.dataset.fileId, name: item.querySelector('.file__name').textContent.trim(),
    meta: item.querySelector('.file__meta').textContent.trim(),
  }));
}

// The files of a message just sent, shown on it until the server's rendering replaces it.
export function sentFiles(files) {
  return el('ul', { class: 'msg__files', 'aria-label': gettext('Attached files') },
    ...files.map((file) => el('li', { class: 'file', 'data-file-id': file.id },
      el('span', { class: 'file__text' }, el('span', { class: 'file__name' }, file.name),
        el('span', { class: 'file__meta' }, `${file.type} · ${size(file.size)}`)))));
}

// A PDF is read by a worker after its upload (state `reading`): asked again this often, this many times.
const READING_POLL_MS = 700;
const READING_POLLS = 200;
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

export function mountAttachments(chat, { signal, announce, showError }) {
  const list = chat.querySelector('[data-attachments]');
  const picker = chat.querySelector('[data-file-input]');
  const input = chat.querySelector('[data-composer-input]');
  const paperclip = chat.querySelector('[data-attach]');
  // In the order the person added them (a chip from the moment it is chosen,
  // whatever order the uploads finish in): {key, name, size, type?, id?, pending?}.
  let files = [];
  let kept = null; // while editing: the edited message's files still kept, {id, name, meta}
  let waiters = [];
  let nextKey = 0;

  const pending = () => files.filter((file) => file.pending).length;
  function settle() {
    if (pending()) return;
    waiters.forEach((resolve) => resolve());
    waiters = [];
  }
  const meta = (file) => file.meta ?? (file.pending === 'reading' ? gettext('Reading…')
    : file.pending ? gettext('Uploading…') : `${file.type} · ${size(file.size)}`);

  function render() {
    const shown = kept ?? files;
    list.replaceChildren(...shown.map((file) => el('li', { class: 'attachment', 'aria-busy': file.pending ? 'true' : 'false' },
      el('span', { class: 'attachment__name' }, file.name),
      el('span', { class: 'attachment__meta' }, meta(file)),
      el('button', {
        type: 'button', class: 'icon-btn attachment__remove', 'data-remove-file': file.id ?? `key-${file.key}`,
        'aria-label': interpolate(gettext('Remove %(name)s'), { name: file.name }),
      }, '×'))));
    list.hidden = shown.length === 0;
  }

  function drop(entry, message) {
    files = files.filter((file) => file !== entry);
    if (message) showError(`${entry.name}: ${message}`);
    render();
    settle();
  }

  // A PDF's text is read by a worker: the chip says so until it is ready or refused.
  async function untilRead(entry) {
    for (let poll = 0; poll < READING_POLLS && files.includes(entry); poll += 1) {
      await sleep(READING_POLL_MS);
      const response = await api('GET', apiUrl(`files/${entry.id}`));
      if (response.ok && response.data.state === 'ready') return true;
      if (!response.ok || response.data.state === 'refused') {
        drop(entry, REFUSALS[response.data.code] ?? response.data.detail);
        return false;
      }
    }
    if (files.includes(entry)) drop(entry, REFUSALS.unreadable_pdf);
    return false;
  }

  async function upload(entry, file) {
    const form = new FormData();
    form.append('file', file, file.name);
    const response = await api('POST', apiUrl('files'), form);
    if (!files.includes(entry)) return; // removed while it was uploading
    if (!response.ok) { drop(entry, REFUSALS[response.data.code] ?? response.data.detail); return; }
    Object.assign(entry, response.data, { pending: response.data.state === 'reading' ? 'reading' : false });
    render();
    if (entry.pending && !(await untilRead(entry))) return;
    entry.pending = false;
    announce(interpolate(gettext('%(name)s attached.'), { name: entry.name }));
    render();
    settle();
  }

  function add(chosen) {
    if (kept) { // the edit API keeps files of the message, it takes no new one
      showError(gettext('An edited message keeps or drops its own files: send new files with a new message.'));
      return;
    }
    for (const file of chosen) {
      if (files.length >= MAX_FILES) {
        showError(interpolate(gettext('A message can take at most %(n)s files.'), { n: MAX_FILES }));
        return;
      }
      const entry = { key: nextKey += 1, name: file.name, size: file.size, pending: 'uploading' };
      files.push(entry);
      render();
      upload(entry, file);
    }
  }

  paperclip.addEventListener('click', () => picker.click(), { signal });
  picker.addEventListener('change', () => { add([...picker.files]); picker.value = ''; }, { signal });
  list.addEventListener('click', (event) => {
    const id = event.target.closest('[data-remove-file]')?.dataset.removeFile;
    if (!id) return;
    if (kept) kept = kept.filter((file) => file.id !== id);
    else files = files.filter((file) => (file.id ?? `key-${file.key}`) !== id);
    render();
    settle();
    input.focus();
  }, { signal });
  input.addEventListener('paste', (event) => {
    const pasted = [...(event.clipboardData?.files ?? [])];
    if (pasted.length) { event.preventDefault(); add(pasted); }
  }, { signal });
  chat.addEventListener('dragover', (event) => {
    if (event.dataTransfer?.types.includes('Files')) { event.preventDefault(); chat.classList.add('is-dropping'); }
  }, { signal });
  chat.addEventListener('dragleave', (event) => {
    if (!chat.contains(event.relatedTarget)) chat.classList.remove('is-dropping');
  }, { signal });
  chat.addEventListener('drop', (event) => {
    chat.classList.remove('is-dropping');
    if (!event.dataTransfer?.files.length) return;
    event.preventDefault();
    add([...event.dataTransfer.files]);
  }, { signal });

  return {
    get files() { return [...(kept ?? files)]; },
    get busy() { return !kept && pending() > 0; },
    // Resolves once every file added so far is uploaded and read (or dropped).
    ready() { return pending() ? new Promise((resolve) => { waiters.push(resolve); }) : Promise.resolve(); },
    clear() { files = []; render(); },
    // Editing a message: its files (messageFiles) shown to keep or remove; null: editing ends.
    editing(ofMessage) {
      kept = ofMessage && [...ofMessage];
      paperclip.disabled = kept !== null;
      render();
    },
  };
}
