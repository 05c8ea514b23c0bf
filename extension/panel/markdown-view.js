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
//
// A secret the model names (`<secret>name</secret>`, which Tabwright filled in for it on the
// page) is shown by its name with a key: which secret was used, never its value (the answer
// never holds it). The tag alone would be an unknown element, which the sanitizer removes.
import { Marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';
import { t } from '../i18n.js';
import { el } from '../dom.js';

// A secret's name travels through markdown and the sanitizer between two private-use marks.
const SECRET = /<secret>\s*([\w.-]{1,64})\s*<\/secret>/gi;
const MARKED_SECRET = /\uE000([\w.-]{1,64})\uE001/g;

/** Shows each secret name marked in `root`'s text as a key and the name. */
function showSecretNames(root) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) if (node.textContent.includes('\uE000')) found.push(node);
  for (const node of /** @type {Text[]} */ (found)) {
    const parts = [];
    let last = 0;
    for (const match of node.textContent.matchAll(MARKED_SECRET)) {
      parts.push(node.textContent.slice(last, match.index));
      const name = el('span', 'secret-ref', `🔑 ${match[1]}`);
      name.title = t('secretUsed', [match[1]]);
      parts.push(name);
      last = match.index + match[0].length;
    }
    parts.push(node.textContent.slice(last));
    node.replaceWith(...parts);
  }
}

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
  const named = String(text ?? '').replace(/[\uE000\uE001]/g, '').replace(SECRET, '\uE000$1\uE001');
  const html = /** @type {string} */ (marked.parse(named));
  const fragment = /** @type {DocumentFragment} */ (/** @type {unknown} */ (purify.sanitize(html, SANITIZE)));
  for (const link of fragment.querySelectorAll('a')) {
    if (!link.getAttribute('href')) {
      link.replaceWith(...link.childNodes);
      continue;
    }
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
  }
  showSecretNames(fragment);
  return fragment;
}
