// Entry point of the browser UI: plain ES modules, no build step.
import { initChat } from './chat.js';
import { initContent } from './content.js';
import { initUi } from './ui.js';

initUi();
initContent();
initChat();
