// Maths typeset by KaTeX (assistant/vendor/katex, loaded before app.js by the
// page: `window.katex`), in the server's rendering of the messages: each
// `.math` element's text is the TeX (web/markdown_math.py). Without KaTeX the
// TeX stays as text.
//
// katex.render builds DOM nodes and sets their sizes through the CSSOM, which
// the page's Content-Security-Policy (style-src without 'unsafe-inline')
// allows. Its error rendering (throwOnError: false) would set a `style`
// attribute, which the policy refuses: errors are caught here instead, and the
// TeX stays as it was, marked `.math--error` with KaTeX's message as its title.

import { gettext, interpolate } from './i18n.js';

const MAX_TEX = 10000; // characters; a longer formula stays as text
const OPTIONS = {
  throwOnError: true, // caught below (see above)
  trust: false, // no \href, \url, \includegraphics, \htmlClass…
  strict: 'ignore',
  maxSize: 20, // em: no \rule or \kern as large as the page
  maxExpand: 500, // macro expansions: no macro bomb
  output: 'htmlAndMathml', // MathML for screen readers, HTML for the eye
};

function typeset(katex, node) {
  const tex = node.textContent;
  node.dataset.tex = tex;
  const displayMode = node.classList.contains('math--display');
  try {
    katex.render(tex, node, { ...OPTIONS, displayMode });
  } catch (error) {
    if (!(error instanceof katex.ParseError)) throw error;
    node.textContent = tex;
    node.classList.add('math--error');
    node.title = interpolate(gettext('This formula could not be shown: %(error)s'), { error: error.message });
    return;
  }
  // A display formula wider than the message scrolls sideways: reachable by keyboard too.
  if (displayMode && node.scrollWidth > node.clientWidth) node.tabIndex = 0;
}

export function renderMath(root) {
  const { katex } = window;
  if (!katex) return;
  root.querySelectorAll('.math:not([data-tex])').forEach((node) => {
    if (node.textContent.length <= MAX_TEX) typeset(katex, node);
  });
}

// `node`'s text as the person reads it, with each formula as its TeX between
// dollars: what Copy puts on the clipboard and the live region announces (a
// typeset formula's own text holds it three times: MathML, TeX and glyphs).
// innerText needs the layout: the copy is measured beside the original, out
// of sight, then removed.
export function textWithTex(node) {
  if (!node.querySelector('[data-tex]')) return node.innerText;
  const copy = node.cloneNode(true);
  copy.querySelectorAll('[data-tex]').forEach((math) => {
    const fence = math.classList.contains('math--display') ? '$$' : '$';
    math.replaceWith(`${fence}${math.dataset.tex}${fence}`);
  });
  copy.removeAttribute('id');
  copy.setAttribute('aria-hidden', 'true');
  copy.classList.add('offscreen-measure');
  node.after(copy);
  const text = copy.innerText;
  copy.remove();
  return text;
}
