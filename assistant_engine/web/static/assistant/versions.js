// Versions of a reply (regenerated) or of a message (edited), one at a time:
// the server renders every version of a set (web/versions.py), the newest
// shown; "‹ 2 / 3 ›" pages through them. A regenerated reply being written
// joins its set here as the newest version, without a reload.

import { collapseLongIn } from './content.js';
import { gettext, interpolate } from './i18n.js';

const LABEL = (number, count) => ({
  short: `${number} / ${count}`,
  long: interpolate(gettext('Version %(number)s of %(count)s'), { number, count }),
});

const versionsOf = (set) => [...set.children].filter((node) => node.matches('.version'));
const pagerOf = (version) => [...version.children].find((node) => node.matches('[data-pager]'));

// The pagers of a set say where each version is (after a version was added).
function renumber(set) {
  const versions = versionsOf(set);
  versions.forEach((version, index) => {
    const pager = pagerOf(version);
    if (!pager) return;
    const { short, long } = LABEL(index + 1, versions.length);
    const [shown, spoken] = pager.querySelector('[data-pager-label]').children;
    shown.textContent = short;
    spoken.textContent = long;
    version.dataset.version = String(index + 1);
    pager.querySelector('[data-version-step="-1"]').disabled = index === 0;
    pager.querySelector('[data-version-step="1"]').disabled = index === versions.length - 1;
  });
}

function show(set, target) {
  versionsOf(set).forEach((version) => { version.hidden = version !== target; });
  collapseLongIn(target); // measured now that it is shown
}

// One step back or forward; focus stays on the pager (on the other arrow at either end).
function step(button, announce) {
  const set = button.closest('.versions');
  const versions = versionsOf(set);
  const from = versions.findIndex((version) => !version.hidden);
  const to = from + Number(button.dataset.versionStep);
  if (to < 0 || to >= versions.length) return;
  show(set, versions[to]);
  const pager = pagerOf(versions[to]);
  const same = pager.querySelector(`[data-version-step="${button.dataset.versionStep}"]`);
  (same.disabled ? pager.querySelector('[data-version-step]:not(:disabled)') : same)?.focus();
  announce(LABEL(to + 1, versions.length).long);
}

const lastIn = (root, node) => {
  for (let at = node; at && at !== root; at = at.parentElement) if (at.nextElementSibling) return false;
  return true;
};

// A reply being written for a set whose newest version it will be (a regenerate).
export function addLiveVersion(messages, article) {
  const set = [...messages.querySelectorAll('.versions[data-awaiting]')].pop();
  if (!set || !lastIn(messages, set)) return false; // only the last message's reply is being written

  const latest = versionsOf(set).pop();
  const version = latest.cloneNode(false);
  version.replaceChildren(article, pagerOf(latest).cloneNode(true));
  set.append(version);
  set.removeAttribute('data-awaiting');
  renumber(set);
  show(set, version);
  return true;
}

// Where the reply to an edited message goes while it is written: in its version.
export function currentVersionOf(messages) {
  const last = messages.lastElementChild;
  if (!last?.matches('.versions[data-versions="message"]')) return null;
  return versionsOf(last).pop();
}

// The version each set showed, to show it again once the messages are re-read
// (a set that got a new version shows the new one).
export function chosenVersions(messages) {
  return [...messages.querySelectorAll('.versions')].map((set) => ({
    key: set.dataset.versionsKey,
    count: versionsOf(set).length,
    index: versionsOf(set).findIndex((version) => !version.hidden),
  }));
}

export function restoreVersions(messages, chosen) {
  for (const { key, count, index } of chosen) {
    const set = messages.querySelector(`.versions[data-versions-key="${CSS.escape(key)}"]`);
    const versions = set ? versionsOf(set) : [];
    if (versions.length === count && versions[index]) show(set, versions[index]);
  }
}

export function initVersions(messages, announce) {
  document.addEventListener('click', (event) => {
    const button = event.target.closest('[data-version-step]');
    if (button) step(button, announce);
  });
  // Left and Right arrows on a pager page too.
  document.addEventListener('keydown', (event) => {
    if (!['ArrowLeft', 'ArrowRight'].includes(event.key)) return;
    const pager = event.target.closest?.('[data-pager]');
    if (!pager) return;
    const button = pager.querySelector(`[data-version-step="${event.key === 'ArrowLeft' ? -1 : 1}"]`);
    if (button.disabled) return;
    event.preventDefault();
    step(button, announce);
  });
}
