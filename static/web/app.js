// Entry point of the browser UI: plain ES modules, no build step.
import './assistant-chat.js';
import { initContent } from './content.js';
import { initPanel } from './panel.js';
import { initUi } from './ui.js';

initUi();
initContent();
initPanel();
