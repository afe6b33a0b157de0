// What the chat says in its composer and banners (chat.js), in the person's language.

import { gettext } from './i18n.js';
import { MODEL_NOT_ALLOWED } from './reply-actions.js';

export const ERRORS = {
  credits_exhausted: gettext('Your organization has used all its credits for this month, so the assistant cannot reply. Credits renew on the 1st (UTC); an administrator can grant more.'),
  conversation_full: gettext('This conversation is full: it has reached the length the model can read. Start a new conversation to go on.'),
  model_not_allowed: MODEL_NOT_ALLOWED,
  conversation_busy: gettext('The assistant is still replying in this conversation. Wait for the reply to finish, then send your message again.'),
};
export const HINT = gettext('Enter to send · Shift+Enter for a new line');
export const WAITING_HINT = gettext('Your message waits for the assistant service; Escape or Stop withdraws it.');
export const BUSY_HINT = gettext('The assistant is replying… Escape or Stop ends the reply; you can write your next message meanwhile.');
export const STOPPING_HINT = gettext('Stopping the reply…');
export const EDIT_HINT = gettext('Editing your last message: Enter resends it (the old one is kept as a previous version) · Escape cancels');
export const EDIT_FILES_HINT = gettext('Its attached files go with it again');
export const ENDED_ANNOUNCEMENTS = { failed: gettext('The reply failed.'), cancelled: gettext('You stopped the reply.') };
