// Page-level tools, which act on the page rather than on one indexed element: scroll, bring a
// text into view, and search the page's text.
//
// Scrolling is measured, not assumed: the reply says how far the page actually moved and
// whether an end was reached, so the model stops asking for more when there is no more.
// Application layouts often keep the document still and scroll a main pane instead; a page
// scroll that cannot move falls back to the largest visible pane that can.
//
// Text searches walk the flat tree — open and closed shadow roots included (closed ones through
// chrome.dom.openOrClosedShadowRoot, as the indexer does) — because what a person sees there
// is on the page as much as the light DOM is.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const unsuitable = (message) => ({ ok: false, code: 'unsuitable', message });
  const fold = (text) => text.replace(/\s+/g, ' ');
  const clamp = (value, low, high, fallback) => {
    const n = Number(value);
    return Number.isFinite(n) ? Math.min(high, Math.max(low, n)) : fallback;
  };

  // Elements that may host a shadow root besides custom elements (same list as the indexer):
  const NO_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'svg', 'math', 'canvas', 'iframe', 'frame', 'object', 'embed']);
  const SCROLLING = new Set(['auto', 'scroll', 'overlay']);

  const { shadowRootOf, renderedChildren } = tw;

  /** Visits the flat tree below `start` in page order, without recursion (pages nest deeply).
   * `onElement` returns false to skip an element's subtree; `onText` returns true to stop. */
  function walkFlat(start, onElement, onText) {
    const stack = [start];
    while (stack.length) {
      const node = stack.pop();
      if (node.nodeType === Node.TEXT_NODE) {
        if (onText?.(node)) return;
        continue;
      }
      if (node.nodeType !== Node.ELEMENT_NODE && node !== start) continue;
      if (node.nodeType === Node.ELEMENT_NODE && (node === tw.highlightHost || onElement(node) === false)) continue;
      const children = renderedChildren(node);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
    }
  }

  function flatParent(node) {
    return node.assignedSlot ?? node.parentNode ?? node.host ?? null;
  }

  // --- scroll ------------------------------------------------------------------------------

  function pageScroller() {
    return document.scrollingElement ?? document.documentElement;
  }

  /** Whether a person can scroll the page itself: the viewport takes its overflow from <html>,
   * or from <body> when <html> leaves it visible. A page that hides it (an open modal, an app
   * layout) does not scroll for a person even though a script could move it. */
  function pageScrolls() {
    const html = document.documentElement;
    if (!html) return false;
    let overflow = getComputedStyle(html).overflowY;
    if (overflow === 'visible' && document.body) overflow = getComputedStyle(document.body).overflowY;
    return overflow !== 'hidden' && overflow !== 'clip';
  }

  /** How far `el` can still scroll in that direction. */
  function room(el, down) {
    const max = el.scrollHeight - el.clientHeight;
    return down ? max - el.scrollTop : el.scrollTop;
  }

  function isScrollContainer(el) {
    if (el.scrollHeight <= el.clientHeight + 1) return false;
    return SCROLLING.has(getComputedStyle(el).overflowY);
  }

  function isPageRoot(el) {
    return el === document.documentElement || el === document.body || el === pageScroller();
  }

  /** The part of an element's box inside the viewport, in square pixels. */
  function visibleArea(el) {
    const r = el.getBoundingClientRect();
    const w = Math.min(r.right, innerWidth) - Math.max(r.left, 0);
    const h = Math.min(r.bottom, innerHeight) - Math.max(r.top, 0);
    return w > 0 && h > 0 ? w * h : 0;
  }

  /** The largest visible container that can scroll in that direction, or null. */
  function largestScrollable(down) {
    let best = null;
    let bestArea = 0;
    const start = document.body ?? document.documentElement;
    if (!start) return null;
    walkFlat(start, (el) => {
      if (NO_TEXT.has(el.localName)) return false;
      // Cheap size test first; computed style only for the few that overflow.
      if (isPageRoot(el) || el.scrollHeight <= el.clientHeight + 1 || room(el, down) <= 1) return true;
      if (!isScrollContainer(el) || !tw.isRendered(el)) return true;
      const area = visibleArea(el);
      if (area > bestArea) {
        best = el;
        bestArea = area;
      }
      return true;
    });
    return best;
  }

  /** The scroll container around an element (itself included), crossing shadow roots; null
   * when it only scrolls with the page. */
  function scrollContainerAround(el) {
    for (let n = el; n; n = flatParent(n)) {
      if (n.nodeType !== Node.ELEMENT_NODE) continue; // a shadow root: go on to its host
      if (isPageRoot(n)) return null;
      if (isScrollContainer(n)) return n;
    }
    return null;
  }

  function scrollElement(el, target, pixels) {
    const before = el.scrollTop;
    el.scrollBy({ top: pixels, behavior: 'instant' });
    const max = el.scrollHeight - el.clientHeight;
    return {
      ok: true,
      result: {
        target,
        moved: Math.round((el.scrollTop - before) * 10) / 10,
        at_start: el.scrollTop <= 1,
        at_end: el.scrollTop >= max - 1,
      },
    };
  }

  tw.scroll = function scroll(down, pages, index) {
    const amount = clamp(pages, 0.1, 10, 1) * (down ? 1 : -1);
    const page = pageScroller();
    if (index !== null && index !== undefined) {
      const el = tw.elementAt(index);
      if (!el) return { ok: false, code: 'element_gone', message: `element [${index}] is no longer on the page` };
      const container = scrollContainerAround(el);
      if (container) return scrollElement(container, 'container', amount * container.clientHeight);
      if (page && pageScrolls() && page.scrollHeight > page.clientHeight + 1) {
        return scrollElement(page, 'page', amount * innerHeight);
      }
      return unsuitable('neither it nor anything around it scrolls; scroll without an index to move the page');
    }
    if (page && (!pageScrolls() || room(page, down) <= 1)) {
      const container = largestScrollable(down);
      if (container) return scrollElement(container, 'container', amount * container.clientHeight);
    }
    if (!page) return { ok: true, result: { target: 'page', moved: 0, at_start: true, at_end: true } };
    if (!pageScrolls()) {
      // Nothing a person could scroll: report where the page stands without moving it.
      const max = page.scrollHeight - page.clientHeight;
      return { ok: true, result: { target: 'page', moved: 0, at_start: page.scrollTop <= 1, at_end: page.scrollTop >= max - 1 } };
    }
    return scrollElement(page, 'page', amount * innerHeight);
  };

  // --- find_text ---------------------------------------------------------------------------

  const SHOWN = { visibilityProperty: true };

  /** Whether a text node is shown: its element rendered and the text itself taking space. */
  function textShown(node, shown) {
    const parent = node.parentElement;
    if (!parent) return false;
    let ok = shown.get(parent);
    if (ok === undefined) {
      ok = parent.checkVisibility ? parent.checkVisibility(SHOWN) : true;
      shown.set(parent, ok);
    }
    if (!ok) return false;
    const range = document.createRange();
    range.selectNodeContents(node);
    return range.getClientRects().length > 0;
  }

  const MAX_FOUND = 100;

  tw.findText = function findText(text) {
    const wanted = fold(String(text)).trim().toLowerCase();
    if (!wanted) return unsuitable('the text to find is empty');
    const start = document.body ?? document.documentElement;
    let first = null;
    let count = 0;
    const shown = new Map();
    if (start) {
      walkFlat(start, (el) => !NO_TEXT.has(el.localName), (node) => {
        if (!fold(node.data).toLowerCase().includes(wanted) || !textShown(node, shown)) return false;
        first ??= node;
        return ++count >= MAX_FOUND;
      });
    }
    if (first) bringIntoView(first);
    return { ok: true, result: { found: count > 0, count } };
  };

  /** Scrolls a text node's element to the middle of the view; when the element is taller than
   * the view, then moves on to the text itself. */
  function bringIntoView(node) {
    node.parentElement.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    const range = document.createRange();
    range.selectNodeContents(node);
    const rect = range.getBoundingClientRect();
    if (rect.bottom < 0 || rect.top > innerHeight) {
      window.scrollBy({ top: rect.top + rect.height / 2 - innerHeight / 2, behavior: 'instant' });
    }
  }

  // --- search_page -------------------------------------------------------------------------

  const MAX_TOTAL = 1000;
  const MAX_MATCH_TEXT = 300;
  // A search gives up counting after this long: the page's own scripts share this thread.
  const SEARCH_BUDGET_MS = 1000;

  /** The page's rendered text: the body's, then that of each shadow root (innerText does not
   * enter shadow trees). */
  function pageText() {
    const parts = [document.body?.innerText ?? document.documentElement?.innerText ?? ''];
    const start = document.body ?? document.documentElement;
    if (start) {
      walkFlat(start, (el) => {
        if (NO_TEXT.has(el.localName)) return false;
        const root = shadowRootOf(el);
        if (root) {
          for (const child of root.children) {
            if (!NO_TEXT.has(child.localName) && child.innerText) parts.push(child.innerText);
          }
        }
        return true;
      });
    }
    return parts.join('\n');
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  tw.searchPage = function searchPage(pattern, regex, maxMatches, context) {
    const source = String(pattern ?? '');
    if (!source) return { ok: false, code: 'bad_pattern', message: 'the pattern is empty' };
    let re;
    try {
      re = new RegExp(regex ? source : escapeRegExp(source), 'gi');
    } catch (error) {
      return { ok: false, code: 'bad_pattern', message: `invalid regular expression: ${error.message}` };
    }
    const max = Math.floor(clamp(maxMatches, 0, MAX_TOTAL, 20));
    const around = Math.floor(clamp(context, 0, 2000, 60));
    const text = pageText();
    const matches = [];
    let total = 0;
    const deadline = performance.now() + SEARCH_BUDGET_MS;
    for (let m = re.exec(text); m && total < MAX_TOTAL; m = re.exec(text)) {
      if (m[0] === '') {
        // An empty match finds nothing and would match at the same place forever.
        re.lastIndex++;
        continue;
      }
      total++;
      if (matches.length < max) {
        const start = m.index;
        const end = start + m[0].length;
        const found = fold(m[0]).trim();
        matches.push({
          text: found.length > MAX_MATCH_TEXT ? `${found.slice(0, MAX_MATCH_TEXT)}…` : found,
          before: fold(text.slice(Math.max(0, start - around * 4), start)).slice(-around).trim(),
          after: fold(text.slice(end, end + around * 4)).slice(0, around).trim(),
        });
      }
      if (performance.now() > deadline) break;
    }
    return { ok: true, result: { total, matches } };
  };
})();
