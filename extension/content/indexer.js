// The eyes, first version: finds the visible interactive elements of the page and numbers them.
//
// Interface (the seam the full indexer keeps): `tabwright.snapshot()` returns a snapshot of
// format version 1 — {version, url, title, scroll: {above_px, below_px}, elements: [{index, tag,
// attributes, text, is_new}]} — and `tabwright.elementAt(index)` returns the live element
// behind an index, or null once it has left the document.
//
// Indices are stable: an element keeps its number for as long as it stays in the document, so
// the model can refer to it across steps. Elements not in the previous snapshot are marked new.
(() => {
  const tw = (globalThis.tabwright ??= {});
  if (tw.snapshot) return; // already injected into this page

  const SNAPSHOT_VERSION = 1;
  const CANDIDATES = [
    'a[href]', 'button', 'input:not([type=hidden])', 'textarea', 'select', 'summary',
    '[role=button]', '[role=link]', '[role=checkbox]', '[role=tab]', '[role=menuitem]',
    '[contenteditable=""]', '[contenteditable=true]',
  ].join(',');
  const SHOWN_ATTRIBUTES = ['type', 'name', 'role', 'aria-label', 'placeholder', 'title', 'alt', 'href', 'aria-expanded', 'autocomplete'];
  const MAX_TEXT = 200;

  const indexOf = new WeakMap(); // element → index
  const byIndex = new Map(); // index → WeakRef(element)
  let nextIndex = 1;
  let previous = new Set(); // indices in the last snapshot

  /** Has a box and is not hidden by CSS. */
  function isVisible(el) {
    const rect = el.getBoundingClientRect();
    if (rect.width <= 0 || rect.height <= 0) return false;
    const style = getComputedStyle(el);
    return style.visibility !== 'hidden' && style.display !== 'none' && Number(style.opacity) !== 0;
  }

  /** Values that must never leave the page: passwords and payment-card fields. */
  function isSecretField(el) {
    const autocomplete = (el.getAttribute('autocomplete') || '').toLowerCase();
    return (el instanceof HTMLInputElement && el.type === 'password') || autocomplete.startsWith('cc-');
  }

  function attributesOf(el) {
    const out = {};
    for (const name of SHOWN_ATTRIBUTES) {
      const value = el.getAttribute(name);
      if (value !== null && value !== '') out[name] = value.slice(0, MAX_TEXT);
    }
    if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && !isSecretField(el) && el.value) {
      out.value = el.value.slice(0, MAX_TEXT);
    }
    if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) {
      out.checked = String(el.checked);
    }
    if (el instanceof HTMLSelectElement && el.selectedOptions.length && !isSecretField(el)) {
      out.value = el.selectedOptions[0].textContent.trim().slice(0, MAX_TEXT);
    }
    if (el.disabled) out.disabled = 'true';
    return out;
  }

  function textOf(el) {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return '';
    return (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, MAX_TEXT);
  }

  function indexFor(el) {
    let index = indexOf.get(el);
    if (index === undefined) {
      index = nextIndex++;
      indexOf.set(el, index);
      byIndex.set(index, new WeakRef(el));
    }
    return index;
  }

  tw.snapshot = function snapshot() {
    const elements = [];
    const current = new Set();
    for (const el of document.querySelectorAll(CANDIDATES)) {
      if (!isVisible(el)) continue;
      const index = indexFor(el);
      current.add(index);
      elements.push({
        index,
        tag: el.tagName.toLowerCase(),
        attributes: attributesOf(el),
        text: textOf(el),
        is_new: previous.size > 0 && !previous.has(index),
      });
    }
    previous = current;
    const scroller = document.scrollingElement || document.documentElement;
    return {
      version: SNAPSHOT_VERSION,
      url: location.href,
      title: document.title,
      scroll: {
        above_px: Math.max(0, Math.round(scroller.scrollTop)),
        below_px: Math.max(0, Math.round(scroller.scrollHeight - scroller.scrollTop - innerHeight)),
      },
      elements,
    };
  };

  tw.elementAt = function elementAt(index) {
    const el = byIndex.get(index)?.deref();
    if (!el || !el.isConnected) {
      byIndex.delete(index);
      return null;
    }
    return el;
  };
})();
