// Entry point of the browser UI: plain ES modules, no build step.
import './assistant-chat.js';
import { initNotifyToggle } from './attention.js';
import { initContent } from './content.js';
import { initPanel } from './panel.js';
import { initShortcuts } from './shortcuts.js';
import { initUi } from './ui.js';

initUi();
initContent();
initPanel();
initShortcuts();
initNotifyToggle();
