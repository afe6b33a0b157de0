// What the person does around the replies, inside <assistant-chat>: 👍/👎 on a
// reply with an optional word (POST /api/messages/{id}/feedback) and the
// conversation's model (PATCH /api/conversations/{id} {model}; a conversation
// not started yet sends it with its first message: chat.js reads `chosenModel`).

import { api, apiUrl } from './api.js';
import { gettext } from './i18n.js';

export const MODEL_NOT_ALLOWED = gettext('Your organization does not allow this model. Choose another one.');

export function chosenModel(chat) {
  const select = chat.querySelector('[data-model-select]');
  return select && select.value ? select.value : null;
}

export function initReplyActions(chat, { conversationId, announce, showError, signal }) {
  async function rate(box, rating, comment) {
    const body = { rating };
    if (comment !== undefined) body.comment = comment;
    const response = await api('POST', apiUrl(`messages/${encodeURIComponent(box.dataset.feedback)}/feedback`), body);
    if (!response.ok) { showError(gettext('Your feedback could not be sent. Please try again.')); return false; }
    box.dataset.rating = rating;
    for (const button of box.querySelectorAll('[data-feedback-rating]')) {
      button.setAttribute('aria-pressed', String(button.dataset.feedbackRating === rating));
    }
    return true;
  }

  chat.addEventListener('click', async (event) => {
    const button = event.target.closest('[data-feedback-rating]');
    if (!button || !chat.contains(button)) return;
    const box = button.closest('[data-feedback]');
    if (!(await rate(box, button.dataset.feedbackRating))) return;
    const word = box.querySelector('[data-feedback-word]');
    word.hidden = false;
    announce(gettext('Thank you for your feedback. You can add a word about it.'));
  }, { signal });

  chat.addEventListener('submit', async (event) => {
    const word = event.target.closest('[data-feedback-word]');
    if (!word) return;
    event.preventDefault();
    event.stopPropagation();
    const box = word.closest('[data-feedback]');
    const comment = word.querySelector('[data-feedback-comment]').value;
    if (!box.dataset.rating || !(await rate(box, box.dataset.rating, comment))) return;
    word.hidden = true;
    announce(gettext('Your word was sent.'));
  }, { signal, capture: true });

  chat.querySelector('[data-model-select]')?.addEventListener('change', async (event) => {
    const id = conversationId();
    if (!id) return; // sent with the first message
    const response = await api('PATCH', apiUrl(`conversations/${encodeURIComponent(id)}`), { model: event.target.value });
    if (!response.ok) {
      showError(response.data.code === 'model_not_allowed' ? MODEL_NOT_ALLOWED : response.data.detail);
      return;
    }
    announce(gettext('The model of this conversation was changed.'));
  }, { signal });
}
