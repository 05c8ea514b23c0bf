// The page as markdown, for reading and extracting whole pages: a snapshot lists what can be
// used, but long articles, tables and listings read far better as text with their structure.
//
// The worker injects this file, after the Turndown library (vendor/turndown.js, which defines
// TurndownService), only when a task asks for the page's content; most tasks never do, so
// neither is a declared content script.
//
// Only what a person sees belongs in the result. The page is copied node by node into a
// detached document, deciding from the live page's computed styles what to leave out: elements
// not rendered (display: none, [hidden], content-visibility: hidden, aria-hidden) are skipped,
// and the text of visibility: hidden elements is (a visible child of one is kept). The copy
// follows the flat tree, so shadow DOM content is included where it is shown. The live page is
// only read, never changed, and the detached document loads no images and runs nothing.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const DROP = new Set([
    'script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'frame', 'object', 'embed',
    'link', 'meta', 'head', 'title', 'datalist', 'audio', 'video', 'math',
  ]);
  const MAX_DEPTH = 400;

  const { renderedChildren } = tw;

  /** An open modal dialog made with ARIA, or null. */
  function openModal() {
    for (const el of document.querySelectorAll('[aria-modal="true"]')) {
      if (!el.checkVisibility || el.checkVisibility({ visibilityProperty: true })) return el;
    }
    return null;
  }

  /** Whether an element and everything in it is absent for a person. While an ARIA modal is
   * open, aria-hidden outside it is not taken at its word: modal libraries put it on the whole
   * application behind the dialog, and that page is still what the reader wants. */
  function notRendered(el, style, modal) {
    if (el.hasAttribute('hidden') || style.display === 'none' || style.contentVisibility === 'hidden') return true;
    return el.getAttribute('aria-hidden') === 'true' && (!modal || tw.flatContains(modal, el));
  }

  /** A URL as an absolute address, or null for one that leads nowhere a reader can go. */
  function absolute(url) {
    if (!url) return null;
    try {
      const parsed = new URL(url, document.baseURI);
      return parsed.protocol === 'http:' || parsed.protocol === 'https:' || parsed.protocol === 'mailto:' ? parsed.href : null;
    } catch {
      return null;
    }
  }

  /** The copy of one live element, or null to leave it out. */
  function copyElement(live, out) {
    const tag = live.localName;
    if (tag === 'img') {
      const alt = (live.getAttribute('alt') ?? '').trim();
      if (!alt) return null; // decoration or an unnamed picture: nothing to read
      const src = absolute(live.currentSrc || live.src);
      if (!src) return out.createTextNode(alt); // an inline data: or blob: image
      const img = out.createElement('img');
      img.setAttribute('alt', alt);
      img.setAttribute('src', src);
      const title = live.getAttribute('title');
      if (title) img.setAttribute('title', title);
      return img;
    }
    if (tag === 'select') {
      if (tw.isSecretField?.(live)) return null;
      return out.createTextNode(` ${[...live.selectedOptions].map((o) => o.text.trim()).join(', ')} `);
    }
    const copy = out.importNode(live, false);
    if (tag === 'a') {
      const href = live.hasAttribute('href') ? absolute(live.href) : null;
      if (href) copy.setAttribute('href', href);
      else copy.removeAttribute('href');
    }
    return copy;
  }

  /** Copies the rendered children of `live` under `copy`. */
  function copyChildren(live, copy, out, ownTextShown, depth, modal) {
    if (depth > MAX_DEPTH) return;
    for (const child of renderedChildren(live)) {
      if (child.nodeType === Node.TEXT_NODE) {
        if (ownTextShown) copy.append(out.createTextNode(child.data));
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE || DROP.has(child.localName) || child === tw.highlightHost) continue;
      const style = getComputedStyle(child);
      if (notRendered(child, style, modal)) continue;
      const childCopy = copyElement(child, out);
      if (!childCopy) continue;
      copy.append(childCopy);
      if (childCopy.nodeType === Node.ELEMENT_NODE && child.localName !== 'img') {
        copyChildren(child, childCopy, out, style.visibility === 'visible', depth + 1, modal);
      }
    }
  }

  tw.markdown = function markdown() {
    if (typeof TurndownService !== 'function') {
      return { ok: false, code: 'unsuitable', message: 'the markdown converter is not loaded' };
    }
    const out = document.implementation.createHTMLDocument('');
    const live = document.body ?? document.documentElement;
    let text = '';
    if (live) {
      const root = out.importNode(live, false);
      copyChildren(live, root, out, getComputedStyle(live).visibility === 'visible', 0, openModal());
      const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
      // Tables (and strikethrough, task lists) as GitHub-flavoured markdown, when the plugin is loaded.
      if (typeof turndownPluginGfm === 'object') turndown.use(turndownPluginGfm.gfm);
      text = turndown.turndown(root);
    }
    text = text.replace(/\n(?:[ \t]*\n){3,}/g, '\n\n\n').trim();
    return { ok: true, result: { markdown: text, title: document.title, url: location.href } };
  };
})();
