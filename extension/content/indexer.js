// The eyes: what a person can see and use in this frame, as a compact snapshot.
//
// tabwright.snapshot({viewportExpansion}) walks the frame's flat tree — light DOM, open and
// closed shadow roots (closed ones through chrome.dom.openOrClosedShadowRoot, without touching
// the page), slotted content where it is shown — and lists, in page order:
//   - interactive elements (interactive.js) that are rendered, have a box, lie in the expanded
//     viewport and are top-most at their visible point (visibility.js), each with a local index;
//   - scrollable containers, with how far they scroll;
//   - free text that belongs to no indexed element;
//   - a placeholder for each visible child frame, named by Chrome's exact frame id (frames.js),
//     which the worker fills with that frame's own snapshot.
// Text inside an indexed element belongs to it, up to the next indexed descendant. An element
// inside an indexed one gets its own index only when it is a distinct interaction (a 'strong'
// classification): a link inside a clickable card does, a span inside a link does not.
//
// Indices are stable: an element keeps its number while it stays in the document; numbers not
// in this document's previous snapshot are marked new. The format (version 2) is documented in
// src/dom/frame.rs, which validates it.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const SNAPSHOT_VERSION = 2;
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'svg', 'math', 'canvas', 'video', 'audio', 'object', 'embed']);
  const FRAMES = new Set(['iframe', 'frame']);
  // Elements that may host a shadow root (besides custom elements, whose names have a dash).
  const SHADOW_HOSTS = new Set(['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'main', 'nav', 'p', 'section', 'span']);
  const MAX_DEPTH = 400;

  const registry = (tw.registry ??= {
    doc: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`,
    indexOf: new WeakMap(), // element → index
    byIndex: new Map(), // index → WeakRef(element)
    next: 1,
    previous: null, // indices in the last snapshot, null before the first
    shadowRoots: [], // WeakRefs to the shadow roots seen, for listener collection
  });

  function indexFor(el) {
    let index = registry.indexOf.get(el);
    if (index === undefined) {
      index = registry.next++;
      registry.indexOf.set(el, index);
      registry.byIndex.set(index, new WeakRef(el));
    }
    return index;
  }

  tw.elementAt = function elementAt(index) {
    const el = registry.byIndex.get(index)?.deref();
    if (!el || !el.isConnected) {
      registry.byIndex.delete(index);
      return null;
    }
    return el;
  };

  function shadowRootOf(el) {
    if (el.shadowRoot) return el.shadowRoot;
    if (!el.localName.includes('-') && !SHADOW_HOSTS.has(el.localName)) return null;
    try {
      return chrome.dom?.openOrClosedShadowRoot?.(el) ?? null;
    } catch {
      return null;
    }
  }

  /** The children a person sees, in order: the shadow tree instead of the light children, and
   * a slot's assigned nodes in place of the slot. */
  function renderedChildren(el, ctx) {
    const root = shadowRootOf(el);
    if (root) {
      ctx.shadowRoots.push(root);
      return root.childNodes;
    }
    if (el.localName === 'slot') {
      const assigned = el.assignedNodes({ flatten: true });
      if (assigned.length) return assigned;
    }
    return el.childNodes;
  }

  /** Elements that have a click listener, as the page-world script reports them. The event it
   * dispatches is seen by capture listeners on the document and on every known shadow root; the
   * deepest target any of them sees is the element itself, even inside a closed shadow root. */
  function elementsWithListeners() {
    const deepest = new Map();
    const note = (event) => deepest.set(event, event.composedPath()[0]);
    const roots = [document];
    for (const ref of registry.shadowRoots) {
      const root = ref.deref();
      if (root) roots.push(root);
    }
    for (const root of roots) root.addEventListener('tabwright:has-listener', note, true);
    document.dispatchEvent(new CustomEvent('tabwright:collect-listeners'));
    for (const root of roots) root.removeEventListener('tabwright:has-listener', note, true);
    return new Set(deepest.values());
  }

  /** Text is seen when its element is rendered, has a box in the expanded viewport, and is not
   * covered (a modal over the page hides its text as well as its buttons). */
  function isVisibleText(parent, ctx) {
    let visible = ctx.textParents.get(parent);
    if (visible === undefined) {
      const rect = parent.getBoundingClientRect();
      visible = tw.hasSize(rect) && tw.inExpandedViewport(rect, ctx.expansion) && tw.isRendered(parent) && tw.isTopMost(parent, rect);
      ctx.textParents.set(parent, visible);
    }
    return visible;
  }

  /** Free text is kept one line per block (paragraph, list item, cell…); inline pieces of the
   * same block join into one line. */
  function addText(textNode, parent, depth, owner, block, ctx) {
    const text = textNode.data;
    if (!text.trim() || !isVisibleText(parent, ctx)) return;
    if (owner) {
      tw.appendText(owner, text);
      return;
    }
    const open = ctx.openText;
    if (open && ctx.nodes[ctx.nodes.length - 1] === open.node && open.block === block && open.node.d === depth) {
      tw.appendText(open.node, text);
    } else {
      const node = { d: depth, text: '' };
      tw.appendText(node, text);
      ctx.nodes.push(node);
      ctx.openText = { node, block };
    }
  }

  function addFrame(el, depth, ctx) {
    const rect = el.getBoundingClientRect();
    if (!tw.hasSize(rect) || !tw.inExpandedViewport(rect, ctx.expansion) || !tw.isRendered(el) || !tw.isTopMost(el, rect)) return;
    const node = { d: depth, frame: -1, at: [rect.left + el.clientLeft, rect.top + el.clientTop] };
    ctx.nodes.push(node);
    ctx.frames.push([node, el]);
    ctx.openText = null;
  }

  function walk(el, depth, owner, parentCursor, parentBlock, level, ctx) {
    const tag = el.localName;
    if (SKIP.has(tag) || el === tw.highlightHost || level > MAX_DEPTH) {
      if (tag === 'svg' && owner) tw.appendText(owner, el.getAttribute('aria-label') || el.querySelector('title')?.textContent || '');
      return;
    }
    // Far outside the expanded viewport: nothing here is listed, and computing its style is the
    // costliest part of a walk on long pages. Its children are still visited, since a
    // positioned child can sit elsewhere.
    const box = el.getBoundingClientRect();
    if (tw.hasSize(box) && !tw.inExpandedViewport(box, ctx.expansion) && !FRAMES.has(tag)) {
      for (const child of renderedChildren(el, ctx)) {
        if (child.nodeType === Node.ELEMENT_NODE) walk(child, depth, owner, parentCursor, parentBlock, level + 1, ctx);
      }
      return;
    }
    const style = getComputedStyle(el);
    if (style.display === 'none') return;
    const block = style.display.startsWith('inline') || style.display === 'contents' ? parentBlock : el;
    if (FRAMES.has(tag)) {
      addFrame(el, depth, ctx);
      return;
    }
    if (tag === 'img' && owner) tw.appendText(owner, el.getAttribute('alt') || '');

    let entry = null;
    const kind = tw.classify(el, style, parentCursor, ctx.listeners.has(el));
    const scroll = el !== ctx.pageScroller ? tw.scrollOf(el, style) : null;
    if (kind === 'strong' || (kind === 'weak' && !owner) || scroll) {
      const rect = el.getBoundingClientRect();
      if (tw.hasSize(rect) && tw.inExpandedViewport(rect, ctx.expansion) && tw.isRendered(el) && tw.isTopMost(el, rect)) {
        const index = indexFor(el);
        entry = { d: depth, i: index, tag };
        const attrs = tw.attributesOf(el);
        if (Object.keys(attrs).length) entry.attrs = attrs;
        if (registry.previous && !registry.previous.has(index)) entry.new = true;
        if (scroll) entry.scroll = scroll;
        ctx.nodes.push(entry);
        ctx.indexed.push([index, el]);
        ctx.openText = null;
      }
    }
    const childDepth = entry ? depth + 1 : depth;
    const childOwner = entry ?? owner;
    for (const child of renderedChildren(el, ctx)) {
      if (child.nodeType === Node.ELEMENT_NODE) walk(child, childDepth, childOwner, style.cursor, block, level + 1, ctx);
      else if (child.nodeType === Node.TEXT_NODE) addText(child, el, childDepth, childOwner, block, ctx);
    }
    if (entry) ctx.openText = null;
  }

  function walkPage(expansion, scroller) {
    const ctx = {
      expansion,
      nodes: [],
      indexed: [],
      frames: [], // [placeholder node, iframe element]
      listeners: elementsWithListeners(),
      shadowRoots: [],
      textParents: new Map(),
      openText: null,
      pageScroller: scroller,
    };
    const start = document.body ?? document.documentElement;
    if (start) walk(start, 0, null, 'auto', start, 0, ctx);
    return ctx;
  }

  tw.snapshot = async function snapshot({ viewportExpansion = 500 } = {}) {
    tw.clearHighlights?.();
    const scroller = document.scrollingElement || document.documentElement;
    const knownRoots = new Set(registry.shadowRoots.map((ref) => ref.deref()));
    let ctx = walkPage(viewportExpansion, scroller);
    registry.shadowRoots = ctx.shadowRoots.map((root) => new WeakRef(root));
    // A listener inside a closed shadow root can only be told apart from its host once the root
    // is known; when the walk met closed roots for the first time, look again with them known.
    if (ctx.shadowRoots.some((root) => root.mode === 'closed' && !knownRoots.has(root))) {
      ctx = walkPage(viewportExpansion, scroller);
      registry.shadowRoots = ctx.shadowRoots.map((root) => new WeakRef(root));
    }
    registry.previous = new Set(ctx.indexed.map(([index]) => index));
    for (const node of ctx.nodes) if (node.text === '') delete node.text;
    const ids = await tw.frameIdsFor(ctx.frames.map(([, el]) => el));
    ctx.frames.forEach(([node], i) => { node.frame = ids[i]; });
    return {
      version: SNAPSHOT_VERSION,
      doc: registry.doc,
      url: location.href,
      title: document.title,
      scroll: {
        above_px: Math.max(0, Math.round(scroller.scrollTop)),
        below_px: Math.max(0, Math.round(scroller.scrollHeight - scroller.scrollTop - innerHeight)),
      },
      nodes: ctx.nodes,
    };
  };
})();
