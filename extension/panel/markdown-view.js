// The final answer as a person reads it: the model writes markdown (lists, tables, links, code),
// and the panel shows it formatted. The text comes from the model, which read web pages, so it is
// treated as hostile: marked turns it into HTML, DOMPurify keeps only harmless elements and
// attributes, and the result is handed over as DOM nodes — never assigned to innerHTML.
//
// What else is taken out, on purpose:
// - images: loading one would send its URL to a server the page chose, and a prompt-injected
//   page could put what the model read into that URL; the alt text stays;
// - forms and their controls, styles, frames: nothing in an answer needs them.
// Links open in a new tab, without access to this page.
import { Marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';

const marked = new Marked({ gfm: true, breaks: true, async: false });

const purify = DOMPurify(window);
purify.addHook('uponSanitizeElement', (node, data) => {
  // An image becomes its alt text.
  if (data.tagName === 'img' && node.parentNode) {
    node.parentNode.replaceChild(document.createTextNode(/** @type {Element} */ (node).getAttribute('alt') ?? ''), node);
  }
});

const SANITIZE = {
  RETURN_DOM_FRAGMENT: true,
  FORBID_TAGS: ['img', 'picture', 'source', 'video', 'audio', 'iframe', 'form', 'input', 'button', 'textarea', 'select', 'style', 'svg', 'math'],
  FORBID_ATTR: ['style', 'class', 'id', 'srcset'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
};

/** `text` (markdown) as sanitized DOM nodes, ready to append. */
export function markdownFragment(text) {
  const html = /** @type {string} */ (marked.parse(String(text ?? '')));
  const fragment = /** @type {DocumentFragment} */ (/** @type {unknown} */ (purify.sanitize(html, SANITIZE)));
  for (const link of fragment.querySelectorAll('a')) {
    if (!link.getAttribute('href')) {
      link.replaceWith(...link.childNodes);
      continue;
    }
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
  }
  return fragment;
}
