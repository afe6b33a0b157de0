// Knowing when a reply is done without watching it: the tab's title says a
// reply is running and, once it ends (or a card waits) while the tab is hidden,
// carries a mark until the tab is seen again; an opt-in browser notification
// says the same. The title only on the chat page (a host page's title is its
// own); the notifications from the panel of a host page too.
//
// Privacy: a notification shows the product's name and a fixed sentence, never
// the conversation's title (the person's first words), the reply or the card: it
// may show on a locked screen or a shared desk.

import { gettext } from './i18n.js';

const NOTIFY_KEY = 'assistant:notify';
const SEPARATOR = ' — ';
const MARKS = {
  replying: () => gettext('Replying…'),
  done: () => `● ${gettext('Reply ready')}`,
  failed: () => `● ${gettext('Reply failed')}`,
  waiting: () => `● ${gettext('Waiting for your confirmation')}`,
};
const NOTICES = {
  done: () => gettext('The reply is ready.'),
  failed: () => gettext('The reply failed.'),
  waiting: () => gettext('A card waits for your confirmation.'),
};

const storage = (action) => { try { return action(window.localStorage); } catch { return null; } };
const supported = () => 'Notification' in window;
export const notifying = () => supported() && Notification.permission === 'granted'
  && storage((store) => store.getItem(NOTIFY_KEY)) === 'on';
const hidden = () => document.visibilityState === 'hidden';

// The title's mark: added in front of whatever the page's title is (a rename or a
// new conversation changes the title under it; the mark is put back).
function titleMark(signal) {
  let mark = '';
  let applied = '';
  const base = () => (applied && document.title.startsWith(applied) ? document.title.slice(applied.length) : document.title);
  const render = () => {
    const title = base();
    applied = mark ? `${mark}${SEPARATOR}` : '';
    if (document.title !== applied + title) document.title = applied + title;
  };
  const head = document.querySelector('title');
  if (head) {
    const observer = new MutationObserver(() => { if (applied && !document.title.startsWith(applied)) render(); });
    observer.observe(head, { childList: true, characterData: true, subtree: true });
    signal.addEventListener('abort', () => observer.disconnect());
  }
  return { set: (text) => { mark = text; render(); }, get: () => mark };
}

// What chat.js tells: a reply started, ended (its status), a card waits.
export function watchAttention(chat, { signal, focusComposer, markTitle = true }) {
  const title = markTitle ? titleMark(signal) : { set: () => {} };
  let replying = false;
  let unseen = ''; // the strongest news not yet seen: waiting > failed > done
  const show = () => title.set(unseen ? MARKS[unseen]() : replying ? MARKS.replying() : '');

  function notify(kind) {
    if (!notifying()) return;
    const note = new Notification(gettext('Assistant'), {
      body: NOTICES[kind](), tag: `assistant-${chat.dataset.conversationId || 'new'}`, lang: document.documentElement.lang,
    });
    note.onclick = () => { window.focus(); focusComposer(); note.close(); };
  }

  function news(kind) {
    if (!hidden()) return;
    if (unseen === 'waiting') return; // already told: a card waits
    unseen = kind;
    show();
    notify(kind);
  }

  document.addEventListener('visibilitychange', () => {
    if (hidden() || !unseen) return;
    unseen = '';
    show();
  }, { signal });

  return {
    replying: (busy) => { replying = busy; show(); },
    ended: (status) => { if (status !== 'cancelled') news(status === 'failed' ? 'failed' : 'done'); },
    cardWaiting: () => news('waiting'),
  };
}

// The account menu's toggle: asks the browser's permission only on this click.
export function initNotifyToggle() {
  const button = document.querySelector('[data-notify-toggle]');
  if (!button) return;
  if (!supported()) return; // stays hidden
  const status = document.querySelector('[data-notify-status]');
  const say = (text) => { if (status) status.textContent = text; };
  const show = () => button.setAttribute('aria-pressed', String(notifying()));
  button.hidden = false;
  show();
  button.addEventListener('click', async () => {
    if (notifying()) {
      storage((store) => store.removeItem(NOTIFY_KEY));
      say(gettext('Notifications are off.'));
    } else {
      const permission = Notification.permission === 'default'
        ? await Notification.requestPermission() : Notification.permission;
      if (permission === 'granted') {
        storage((store) => store.setItem(NOTIFY_KEY, 'on'));
        say(gettext("Notifications are on: when a reply ends or a card waits while this tab is hidden. They say only that, never the conversation's title or what was said."));
      } else {
        say(gettext('Your browser blocks notifications from this site: allow them in its site settings first.'));
      }
    }
    show();
  });
  // The sentence goes at the next click elsewhere or Escape.
  document.addEventListener('click', (event) => { if (!event.target.closest('.notify')) say(''); });
  document.addEventListener('keydown', (event) => { if (event.key === 'Escape') say(''); });
}
