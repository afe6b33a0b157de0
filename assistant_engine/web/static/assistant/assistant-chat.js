// <assistant-chat>: the assistant's one front-end component. The chat page
// holds one as its main column; a host page's panel (templates/web/_panel.html,
// `{% assistant_panel %}`) holds another. The server renders its inside
// (templates/web/_chat.html); this element brings it to life and lets it go
// when it is removed (a panel's "New conversation" replaces it).
//
// Events it sends (bubbling), for the page around it:
//   assistant:conversation  {conversationId}  a conversation was started here
//   assistant:effect        {tool, cardId, object, input}  the product's data changed: a card was
//                           confirmed and done (ui.js), or a write tool ran in a turn (turn-follow.js;
//                           cardId and input null)

import { mountChat } from './chat.js';

export class AssistantChat extends HTMLElement {
  connectedCallback() {
    if (this.controller) return;
    this.controller = mountChat(this, { panel: this.dataset.mode === 'panel' });
  }

  disconnectedCallback() {
    this.controller?.destroy();
    this.controller = null;
  }
}

if (!customElements.get('assistant-chat')) customElements.define('assistant-chat', AssistantChat);
