// The eyes: what a person can see and use in this frame, as a compact snapshot.
//
// tabwright.snapshot({viewportExpansion}) walks the frame's flat tree — light DOM, open and
// closed shadow roots (closed ones through chrome.dom.openOrClosedShadowRoot, without touching
// the page), slotted content where it is shown — and lists, in page order:
//   - interactive elements (interactive.js) that are rendered, have a box, lie in the expanded
//     viewport and are top-most at their visible point (visibility.js), each with a local index;
//   - scrollable containers, with how far they scroll;
//   - free text that belongs to no indexed element;
//   - a placeholder for each visible child frame, with the token its content script got from
//     the worker (frames.js), which the worker turns into the frame's id and fills with that
//     frame's own snapshot.
// Text inside an indexed element belongs to it, except the text of its indexed descendants. An element
// inside an indexed one gets its own index only when it is a distinct interaction (a 'strong'
// classification): a link inside a clickable card does, a span inside a link does not. A
// container that only listens for the separate items inside it (a suggestion list, a row of
// actions: interactive.js, separateItems) is listed as those items. Pictures name the control
// they are in (text.js, iconName).
//
// Indices are stable: an element keeps its number while it stays in the document; numbers not
// in this document's previous snapshot are marked new. The format (version 3) is documented in
// src/dom/frame.rs, which validates it.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const SNAPSHOT_VERSION = 3;
  const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'math', 'canvas', 'video', 'audio', 'object', 'embed']);
  const FRAMES = new Set(['iframe', 'frame']);
  // Elements that may host a shadow root (besides custom elements, whose names have a dash).
  const SHADOW_HOSTS = new Set(['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'main', 'nav', 'p', 'section', 'span']);
  const MAX_DEPTH = 400;
  // An element listed for a click listener alone that holds this many controls is a container
  // listening for them (event delegation), not a control.
  const DELEGATION_MIN = 2;
  // A container of separate items is smaller than this share of the viewport: a larger one is
  // a part of the page, whose blocks are not choices.
  const SMALL_AREA = 0.5;
  // An element's `icon` names at most this many pictures.
  const MAX_ICONS = 3;
  const { ELEMENT_NODE, TEXT_NODE } = Node;
  // Bounds the core also enforces; staying inside them keeps one odd page from being refused.
  const MAX_NODES = 150_000;
  const MAX_URL = 8_000;

  const registry = (tw.registry ??= {
    doc: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`,
    indexOf: new WeakMap(), // element → index
    byIndex: new Map(), // index → WeakRef(element)
    next: 1,
    previous: null, // indices in the last snapshot, null before the first
    shadowRoots: [], // WeakRefs to the shadow roots seen, for listener collection
    scrollers: [], // WeakRefs to the containers the last snapshot listed as scrolling
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

  /** The live element behind an index, or null while it is not in the document (it keeps its
   * number if it comes back). */
  tw.elementAt = function elementAt(index) {
    const el = registry.byIndex.get(index)?.deref();
    return el && el.isConnected ? el : null;
  };

  // Closed shadow roots, asked of chrome.dom once per element: the question costs as much as
  // measuring a box, and a root, once attached, stays. An element found without one is not
  // asked again until the page attaches a closed root somewhere (page-shadow-roots.js reports
  // it), nor while the document is still being parsed (a declarative root may be on its way).
  const closedRoots = new WeakMap(); // host → its closed root
  let withoutClosedRoot = new WeakSet();
  const closedRootAttached = () => { withoutClosedRoot = new WeakSet(); };
  document.addEventListener('tabwright:closed-shadow-root', closedRootAttached, true);
  tw.onRetire(() => document.removeEventListener('tabwright:closed-shadow-root', closedRootAttached, true));

  function shadowRootOf(el) {
    const open = el.shadowRoot;
    if (open) return open;
    if (!el.localName.includes('-') && !SHADOW_HOSTS.has(el.localName)) return null;
    const known = closedRoots.get(el);
    if (known) return known;
    if (withoutClosedRoot.has(el)) return null;
    let root = null;
    try {
      root = chrome.dom?.openOrClosedShadowRoot?.(el) ?? null;
    } catch {
      // an element chrome.dom will not look into
    }
    if (root) closedRoots.set(el, root);
    else if (document.readyState !== 'loading') withoutClosedRoot.add(el);
    return root;
  }
  /** The element's shadow root, open or closed, or null (shared with page-tools.js and markdown.js). */
  tw.shadowRootOf = shadowRootOf;

  /** The children a person sees: the shadow tree instead of the light children, a slot's
   * assigned nodes in place of the slot (the flat tree other content scripts walk). */
  tw.renderedChildren = function renderedChildren(node) {
    if (node.nodeType === Node.ELEMENT_NODE) {
      const root = shadowRootOf(node);
      if (root) return root.childNodes;
      if (node instanceof HTMLSlotElement) {
        const assigned = node.assignedNodes({ flatten: true });
        if (assigned.length) return assigned;
      }
    }
    return node.childNodes;
  };

  /** The children a person sees, in order: the shadow tree instead of the light children, and
   * a slot's assigned nodes in place of the slot. */
  function renderedChildren(el, ctx) {
    const root = shadowRootOf(el);
    if (root) {
      ctx.shadowRoots.push(root);
      return root.childNodes;
    }
    if (el instanceof HTMLSlotElement) {
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

  /** Free text is seen when the element that gives it a box is rendered, in the expanded
   * viewport, not covered (a modal over the page hides its text as well as its buttons) and not
   * outside an open modal dialog. */
  function isVisibleText(boxParent, boxRect, clip, ctx) {
    let visible = ctx.textParents.get(boxParent);
    if (visible === undefined) {
      const rect = boxRect ?? boxParent.getBoundingClientRect();
      // A box of a pixel or less is the visually-hidden pattern (a screen reader's words, a
      // live region's announcement): not text a person sees.
      visible = rect.width > 1 && rect.height > 1 && tw.inExpandedViewport(rect, ctx.expansion) && inClip(rect, clip) && isRendered(boxParent, ctx)
        && !tw.outsideModal(boxParent, ctx.modal) && tw.isUncovered(boxParent, clipped(rect, clip));
      ctx.textParents.set(boxParent, visible);
    }
    return visible;
  }

  /** Text inside an indexed element is that element's (it passed its own checks); other text is
   * kept one line per block (paragraph, list item, cell…), inline pieces of a block joined —
   * with a space only where the page has one: `Pull<span> request</span>s` reads "Pull
   * requests". */
  function addText(textNode, up, ctx) {
    const text = textNode.data;
    if (!text.trim()) {
      if (ctx.lastText) ctx.lastText.spaced = true;
      return;
    }
    const follows = (target) => ctx.lastText?.target === target && ctx.lastText.block === up.block
      && !ctx.lastText.spaced && !/^\s/.test(text);
    const appended = (target) => {
      ctx.lastText = { target, block: up.block, spaced: /\s$/.test(text) };
    };
    if (up.owner) {
      // A transparent element listed for clicking keeps the words a screen reader gives it.
      if (isRendered(up.box, ctx) || ctx.transparent.has(up.ownerElement)) {
        tw.appendText(up.owner, text, follows(up.owner));
        appended(up.owner);
      }
      return;
    }
    if (!isVisibleText(up.box, up.boxRect, up.clip, ctx)) return;
    const open = ctx.openText;
    if (open && ctx.nodes[ctx.nodes.length - 1] === open.node && open.block === up.block && open.node.d === up.depth) {
      tw.appendText(open.node, text, follows(open.node));
      appended(open.node);
    } else {
      const node = { d: up.depth, text: '' };
      tw.appendText(node, text);
      ctx.nodes.push(node);
      ctx.openText = { node, block: up.block };
      appended(node);
    }
  }

  /** tw.isRendered, once per element per walk: many text nodes share one parent. */
  function isRendered(el, ctx) {
    let rendered = ctx.rendered.get(el);
    if (rendered === undefined) {
      rendered = tw.isRendered(el);
      ctx.rendered.set(el, rendered);
    }
    return rendered;
  }

  /** Whether a box shows through the clip of the scrolling or overflow-hidden containers
   * around it (null: nothing clips). */
  function inClip(rect, clip) {
    return !clip || (rect.bottom > clip.top && rect.top < clip.bottom && rect.right > clip.left && rect.left < clip.right);
  }

  /** The clip for an element's children: its own box, when it clips its overflow. */
  function clipFor(el, style, overflowY, rect, clip, ctx) {
    if (el === ctx.pageScroller || el === document.body) return clip;
    if (style.overflowX === 'visible' && overflowY === 'visible') return clip;
    if (!clip) return { top: rect.top, bottom: rect.bottom, left: rect.left, right: rect.right };
    return {
      top: Math.max(clip.top, rect.top),
      bottom: Math.min(clip.bottom, rect.bottom),
      left: Math.max(clip.left, rect.left),
      right: Math.min(clip.right, rect.right),
    };
  }

  /** Whether a candidate element is on screen for a person: rendered (or transparent but where
   * a click lands: visibility.js, isClickable), with a box in the expanded viewport and inside
   * the containers that clip it, reachable (not outside an open modal) and top-most. */
  function onScreen(el, rect, clip, ctx) {
    if (!(tw.hasSize(rect) && tw.inExpandedViewport(rect, ctx.expansion) && inClip(rect, clip))) return false;
    const transparent = !isRendered(el, ctx);
    if (transparent && !tw.isClickable(el, rect)) return false;
    if (tw.outsideModal(el, ctx.modal) || !tw.isTopMost(el, clipped(rect, clip))) return false;
    if (transparent) ctx.transparent.add(el);
    return true;
  }

  /** The part of a box its clip lets through: where a hit test should aim. */
  function clipped(rect, clip) {
    if (!clip) return rect;
    const left = Math.max(rect.left, clip.left);
    const top = Math.max(rect.top, clip.top);
    const right = Math.min(rect.right, clip.right);
    const bottom = Math.min(rect.bottom, clip.bottom);
    return { left, top, right, bottom, width: right - left, height: bottom - top };
  }

  function addFrame(el, rect, up, ctx) {
    if (!onScreen(el, rect, up.clip, ctx)) return;
    const node = { d: up.depth, token: '', at: [rect.left + el.clientLeft, rect.top + el.clientTop] };
    ctx.nodes.push(node);
    ctx.frames.push([node, el]);
    ctx.openText = null;
  }

  /** A tag name the core accepts (custom elements may use characters it does not). */
  function tagName(el) {
    const tag = el.localName;
    return /^[a-z0-9_.:-]{1,64}$/.test(tag) ? tag : 'element';
  }

  function addElement(el, rect, scroll, up, ctx) {
    if (ctx.nodes.length >= MAX_NODES || !onScreen(el, rect, up.clip, ctx)) return null;
    const index = indexFor(el);
    const entry = { d: up.depth, i: index, tag: tagName(el) };
    const attrs = tw.attributesOf(el);
    if (Object.keys(attrs).length) entry.attrs = attrs;
    if (registry.previous && !registry.previous.has(index)) entry.new = true;
    if (scroll) {
      entry.scroll = scroll;
      ctx.scrollers.push(el);
    }
    ctx.nodes.push(entry);
    ctx.indexed.push([index, el]);
    ctx.openText = null;
    return entry;
  }

  /** Adds the name of an icon (text.js, iconName) to an entry's `icon`: what its pictures show,
   * which the core says when nothing else names it. */
  function addIcon(entry, name) {
    const attrs = (entry.attrs ??= {});
    const known = attrs.icon ? attrs.icon.split(', ') : [];
    if (known.length < MAX_ICONS && !known.includes(name)) attrs.icon = [...known, name].join(', ');
  }

  /** An svg is not walked into, but it can be a control itself (an icon button), and its label
   * (or, without one, the icon it draws) names the control it sits in. */
  function walkSvg(el, up, ctx) {
    const style = getComputedStyle(el);
    if (style.display === 'none') return;
    const label = el.getAttribute('aria-label') || el.querySelector('title')?.textContent || '';
    const kind = tw.classify(el, style.cursor, up.cursor, ctx.listeners.has(el), ctx.items.has(el));
    let named = null;
    if (kind === 'strong' || (kind === 'weak' && !up.owner)) {
      named = addElement(el, el.getBoundingClientRect(), null, up, ctx);
    } else if (up.owner && isRendered(el, ctx)) {
      named = up.owner;
    }
    if (named && label.trim()) tw.appendText(named, label);
    else if (named) {
      const icon = tw.iconName(el);
      if (icon) addIcon(named, icon);
    }
    ctx.lastText = null;
  }

  /** Whether anything inside a far element may show in the expanded viewport. One measure of
   * what it holds (a range over its content: every piece of text in it, and the boxes of its
   * children) stands for measuring each element inside: on a long page most of the walk is in
   * such far parts. A child placed near by CSS still counts, and so does its text wherever it
   * sits. What the measure cannot see counts as near: a shadow tree, a slot's assigned nodes. */
  function holdsSomethingNear(el, ctx) {
    if (el instanceof HTMLSlotElement || shadowRootOf(el)) return true;
    ctx.range ??= document.createRange();
    ctx.range.selectNodeContents(el);
    const held = ctx.range.getBoundingClientRect();
    return tw.hasSize(held) && tw.inExpandedViewport(held, ctx.expansion);
  }

  /** `up` is what an element inherits from the walk above it: its depth among listed nodes, the
   * indexed element that owns its text (if any), its parent's cursor, the block its text joins,
   * and the nearest element with a box (display: contents elements and slots have none) with
   * that box as measured (none for the element the walk starts at). */
  function walk(el, up, level, ctx) {
    const tag = el.localName;
    if (el === tw.highlightHost || level > MAX_DEPTH) return;
    if (tag === 'svg') {
      walkSvg(el, up, ctx);
      return;
    }
    if (SKIP.has(tag)) return;
    // Far outside the expanded viewport: nothing here is listed, and computing its style is the
    // costliest part of a walk on long pages. Its children are visited only when something it
    // holds shows nearer (a positioned child can sit elsewhere).
    const box = el.getBoundingClientRect();
    if (tw.hasSize(box) && !tw.inExpandedViewport(box, ctx.expansion) && !FRAMES.has(tag)) {
      if (!holdsSomethingNear(el, ctx)) return;
      const children = renderedChildren(el, ctx);
      for (let i = 0, n = children.length; i < n; i++) {
        if (children[i].nodeType === ELEMENT_NODE) walk(children[i], up, level + 1, ctx);
      }
      return;
    }
    const style = getComputedStyle(el);
    // Each computed value is read once: every read of a computed style asks the engine again.
    const display = style.display;
    if (display === 'none') return;
    if (FRAMES.has(tag)) {
      addFrame(el, box, up, ctx);
      return;
    }
    if (tag === 'img' && up.owner && isRendered(el, ctx)) {
      tw.appendText(up.owner, el.getAttribute('alt') || '');
      ctx.lastText = null;
    }

    const cursor = style.cursor;
    const overflowY = style.overflowY;
    const listened = ctx.listeners.has(el);
    const isItem = ctx.items.has(el);
    const kind = tw.classify(el, cursor, up.cursor, listened, isItem);
    // An element whose only sign is a click listener may be a control, or the container a
    // script listens on for all the items inside it (event delegation: SortableJS's list,
    // React's root). Until its content is walked it owns nothing: its items are looked for
    // inside it and its words kept as free text; then it is taken out if it holds several
    // controls, or else takes its words back (`delegatorWalked`).
    const listenerOnly = kind === 'strong' && listened && !isItem && tw.classify(el, cursor, up.cursor, false) === null;
    const scroll = el !== ctx.pageScroller ? tw.scrollOf(el, overflowY) : null;
    const at = ctx.nodes.length;
    const indexedBefore = ctx.indexed.length;
    const entry = kind === 'strong' || (kind === 'weak' && !up.owner) || scroll ? addElement(el, box, scroll, up, ctx) : null;
    // A container listed for a listener, focus or cursor of its own whose content is separate
    // items alike (interactive.js, separateItems: a suggestion list, a row of actions) is
    // where the page listens for them: the items are listed, each a control, and the container
    // is taken out once they are (`delegatorWalked`). Not for one most of a screen large (a
    // page section).
    const items = entry && kind && !isItem && box.width * box.height < SMALL_AREA * innerWidth * innerHeight
      ? tw.separateItems(el) : null;
    if (items) for (const item of items) ctx.items.add(item);
    const owns = entry && kind && !listenerOnly && !items;
    if (entry && kind) {
      if (tw.isDragSource(el, cursor, up.cursor, isItem)) (entry.attrs ??= {}).draggable = 'true';
      const icon = tw.iconName(el);
      if (icon) addIcon(entry, icon);
    } else if (up.owner) {
      const icon = tw.iconName(el);
      if (icon && isRendered(el, ctx)) addIcon(up.owner, icon);
    }
    const contents = display === 'contents';
    const below = {
      depth: entry ? up.depth + 1 : up.depth,
      // A container listed only because it scrolls does not own what is inside it.
      owner: owns ? entry : up.owner,
      ownerElement: owns ? el : up.ownerElement,
      cursor,
      block: display.startsWith('inline') || contents ? up.block : el,
      box: contents ? up.box : el,
      boxRect: contents ? up.boxRect : box,
      clip: contents ? up.clip : clipFor(el, style, overflowY, box, up.clip, ctx),
    };
    // Indexed rather than iterated: a list's iterator costs more per child than the walk of it.
    const children = renderedChildren(el, ctx);
    for (let i = 0, n = children.length; i < n; i++) {
      const child = children[i];
      const type = child.nodeType;
      if (type === ELEMENT_NODE) walk(child, below, level + 1, ctx);
      else if (type === TEXT_NODE) addText(child, below, ctx);
    }
    const held = ctx.indexed.length - indexedBefore - 1;
    if (entry && (listenerOnly || items)) delegatorWalked(entry, at, held, items ? 1 : DELEGATION_MIN, ctx);
    if (entry && kind && !entry.text) {
      if (held > 0) {
        // Without words, around other controls: its pictures are theirs (a select's arrow
        // beside its field), and it is only their wrapper (dom::stitch folds it).
        if (entry.attrs?.icon) delete entry.attrs.icon;
        if (entry.attrs && !Object.keys(entry.attrs).length) delete entry.attrs;
      } else if (!entry.attrs?.icon) {
        // Nothing inside names it: the picture it has for a background may.
        const background = /url\(["']?([^"')]+)/.exec(style.backgroundImage)?.[1];
        const icon = background ? tw.iconFromFile(background) : '';
        if (icon) addIcon(entry, icon);
      }
    }
    if (entry) ctx.openText = null;
  }

  /** An entry that may be the container a script listens on for the controls inside it (at
   * `at`: listed for a click listener alone, or made of separate items), once its content is
   * walked: when it holds `min` controls or more, it is that container, not a control of its
   * own, and is taken out (what it held moves up a level); otherwise it is the control, and the
   * free text inside it becomes its words, as any control's words are. A container that scrolls
   * stays listed, without words. */
  function delegatorWalked(entry, at, held, min, ctx) {
    const nodes = ctx.nodes;
    if (nodes[at] !== entry) return;
    let end = at + 1;
    while (end < nodes.length && nodes[end].d > entry.d) end++;
    if (held >= min) {
      if (entry.scroll) return;
      for (let i = at + 1; i < end; i++) nodes[i].d -= 1;
      nodes.splice(at, 1);
      const i = ctx.indexed.findIndex(([index]) => index === entry.i);
      if (i >= 0) ctx.indexed.splice(i, 1);
      return;
    }
    if (entry.scroll) return;
    const words = [];
    for (let i = end - 1; i > at; i--) {
      if (nodes[i].i === undefined && nodes[i].text !== undefined && nodes[i].frame === undefined && nodes[i].token === undefined) {
        words.unshift(nodes[i].text);
        nodes.splice(i, 1);
      }
    }
    for (const text of words) tw.appendText(entry, text);
  }

  /** Reads the page: what is read once per reading (text.js's labels by id) holds while it
   * runs (`tw.readingPage`). */
  function walkPage(expansion, scroller) {
    tw.readingPage = true;
    try {
      return walkPageNow(expansion, scroller);
    } finally {
      tw.readingPage = false;
    }
  }

  function walkPageNow(expansion, scroller) {
    let modal = null;
    try {
      modal = document.querySelector(':modal');
    } catch {
      // a browser without :modal
    }
    const ctx = {
      expansion,
      modal,
      nodes: [],
      indexed: [],
      scrollers: [], // the containers listed because they scroll
      frames: [], // [placeholder node, iframe element]
      listeners: elementsWithListeners(),
      shadowRoots: [],
      textParents: new Map(),
      rendered: new Map(),
      transparent: new Set(), // elements listed though transparent (onScreen)
      items: new Set(), // separate items of the containers listed in their place (separateItems)
      openText: null,
      lastText: null, // where the last text went: {target, block, spaced}, to join inline pieces
      pageScroller: scroller,
    };
    const start = document.body ?? document.documentElement;
    if (start) walk(start, { depth: 0, owner: null, ownerElement: null, cursor: 'auto', block: start, box: start, clip: null }, 0, ctx);
    return ctx;
  }

  // Elements added since the last snapshot: a later action of the same step that names an
  // element by index may then mean something else (a suggestion list opened over the form).
  let additions = null;
  let added = false;
  function watchAdditions() {
    added = false;
    additions ??= new MutationObserver((records) => {
      if (added) return;
      added = records.some((r) => [...r.addedNodes].some((n) => n.nodeType === Node.ELEMENT_NODE && n !== tw.highlightHost));
    });
    additions.disconnect();
    additions.observe(document, { childList: true, subtree: true });
  }
  tw.onRetire(() => additions?.disconnect());
  /** Whether elements were added to the document since the last snapshot. */
  tw.elementsAdded = () => {
    if (additions?.takeRecords().some((r) => [...r.addedNodes].some((n) => n.nodeType === Node.ELEMENT_NODE && n !== tw.highlightHost))) {
      added = true;
    }
    return { ok: true, result: { added } };
  };

  // The longest a snapshot waits for the page's transitions and animations to end.
  const SETTLE_ANIMATIONS_MS = 400;

  /** The running transitions and animations that do end: a menu closing after a choice still
   * covers the form while it fades, and a snapshot taken then would show it covering the
   * form. Endless ones (a spinner) are left out. */
  function endingAnimations() {
    const ending = (a) => a.playState === 'running' && Number.isFinite(a.effect?.getComputedTiming?.().endTime);
    try {
      const found = document.getAnimations().filter(ending);
      // Those of shadow trees are their roots' own (a web component's popup closing).
      for (const ref of registry.shadowRoots) found.push(...(ref.deref()?.getAnimations?.() ?? []).filter(ending));
      return found;
    } catch {
      return [];
    }
  }

  /** Lets the running transitions and animations that end run to their end, waiting at most
   * `maxMs`; true when there were some. A page not on screen (a background tab) paints no
   * frames and its animations stand still, so there they are taken to their end at once:
   * they end where the page meant them to, only sooner. */
  tw.settleAnimations = async function settleAnimations(maxMs) {
    const moving = endingAnimations();
    if (!moving.length) return false;
    if (document.visibilityState === 'hidden') {
      for (const animation of moving) {
        try {
          animation.finish();
        } catch {
          // one that cannot finish is left as it is
        }
      }
    } else {
      await Promise.race([Promise.allSettled(moving.map((a) => a.finished)), new Promise((resolve) => setTimeout(resolve, maxMs))]);
    }
    // What the page does once they end (hiding the popup that faded out) runs before going on.
    await new Promise((resolve) => setTimeout(resolve, 0));
    return true;
  };

  // Within this long after an action here (executor.js notes when one answered), the page is
  // given a paint before it is read.
  const REACTING_MS = 1_000;

  /** Resolves once the page has painted a frame and run what it does after painting (a hidden
   * tab paints none: then after a moment). */
  function afterPaint() {
    return new Promise((resolve) => {
      let done = false;
      const go = () => {
        if (done) return;
        done = true;
        setTimeout(resolve, 0);
      };
      requestAnimationFrame(go);
      setTimeout(go, 50);
    });
  }

  tw.snapshot = async function snapshot({
    viewportExpansion = 0, screen = null, worker = null, painted = false, readingAhead = false,
  } = {}) {
    // What is read once per snapshot (text.js: the labels of a page by the ids they name).
    tw.snapshotCount = (tw.snapshotCount ?? 0) + 1;
    // Just after an action here the page is still reacting: frameworks run their effects after
    // painting (React), and a menu starts closing then (Shoelace). So it is given a paint
    // first, unless the caller waited for one (`painted`).
    if (!painted && tw.actedAt !== undefined && performance.now() - tw.actedAt < REACTING_MS) {
      tw.actedAt = undefined;
      await afterPaint();
    }
    // Animations are waited for (at most SETTLE_ANIMATIONS_MS) only when there are some:
    // otherwise the walk runs before this call returns (reading ahead counts on it).
    if (endingAnimations().length) await tw.settleAnimations(SETTLE_ANIMATIONS_MS);
    // A reading ahead that ran while this request's reading waited (for the same paint, after a
    // click) has moved on what counts as new: it goes, and "new" with it, so this reading marks
    // what is new since the last snapshot sent.
    if (!readingAhead) dropAhead();
    tw.clearHighlights?.({ keepLayer: true });
    tw.setScreen(screen);
    const scroller = document.scrollingElement || document.documentElement;
    const knownRoots = new Set(registry.shadowRoots.map((ref) => ref.deref()));
    let ctx;
    tw.holdViewport();
    try {
      ctx = walkPage(viewportExpansion, scroller);
      registry.shadowRoots = ctx.shadowRoots.map((root) => new WeakRef(root));
      // A listener inside a closed shadow root can only be told apart from its host once the
      // root is known; when the walk met closed roots for the first time, look again with them
      // known.
      if (ctx.shadowRoots.some((root) => root.mode === 'closed' && !knownRoots.has(root))) {
        ctx = walkPage(viewportExpansion, scroller);
        registry.shadowRoots = ctx.shadowRoots.map((root) => new WeakRef(root));
      }
    } finally {
      tw.releaseViewport();
    }
    registry.previous = new Set(ctx.indexed.map(([index]) => index));
    registry.scrollers = ctx.scrollers.map((el) => new WeakRef(el));
    if (registry.byIndex.size > 10_000 + 2 * ctx.indexed.length) {
      for (const [index, ref] of registry.byIndex) if (!ref.deref()) registry.byIndex.delete(index);
    }
    for (const node of ctx.nodes) if (node.text === '') delete node.text;
    const tokens = await tw.frameTokens(ctx.frames.map(([, el]) => el), worker);
    ctx.frames.forEach(([node], i) => { node.token = tokens[i]; });
    watchAdditions();
    const url = location.href;
    return {
      version: SNAPSHOT_VERSION,
      doc: registry.doc,
      url: url.length > MAX_URL ? `${url.slice(0, MAX_URL)}…` : url,
      title: String(document.title).slice(0, 1000),
      scroll: {
        above_px: Math.max(0, Math.round(scroller?.scrollTop ?? 0)),
        below_px: Math.max(0, Math.round((scroller?.scrollHeight ?? 0) - (scroller?.scrollTop ?? 0) - innerHeight)),
      },
      viewport: [innerWidth, innerHeight],
      nodes: ctx.nodes,
    };
  };

  // --- Reading ahead -----------------------------------------------------------------------
  // After a click that changed the page in place, when the worker said a look at the page
  // comes next, the frame is read at once instead of when the request for it arrives: the
  // worker meanwhile checks that the click opened no tab and started no navigation, and the
  // request then finds the snapshot taken. It is used only if nothing could have changed
  // since: no change to the document (or a shadow tree the walk went into), the same scroll
  // positions (of the page and of the containers listed as scrolling) and window size, and
  // not older than AHEAD_MAX_MS. Otherwise it is dropped and the frame read again, as if it
  // had never been read ahead (the elements marked new are those new since the last snapshot
  // that was sent).
  const AHEAD_MAX_MS = 100;
  let ahead = null; // {viewportExpansion, snapshot (promise), previous, taken, dirty, where, stop}

  /** Where everything a scroll or a resize moves stands: compared, not listened for, as
   * scroll and resize events come only with the next frame. */
  function placement() {
    const where = [innerWidth, innerHeight, scrollX, scrollY];
    for (const ref of registry.scrollers ?? []) {
      const el = ref.deref();
      where.push(el ? el.scrollTop : -1, el ? el.scrollLeft : -1);
    }
    return where.join(',');
  }

  /** Stops watching the page for the snapshot read ahead and hands it over, or null. */
  function endAhead() {
    const entry = ahead;
    ahead = null;
    entry?.stop();
    return entry;
  }

  tw.onRetire(() => endAhead());

  /** Forgets a snapshot read ahead, and what taking it changed. */
  function dropAhead() {
    const entry = endAhead();
    if (entry) registry.previous = entry.previous;
  }

  /** Reads the frame now for a snapshot request expected soon (see above). */
  tw.readAhead = function readAhead({ viewportExpansion }) {
    dropAhead();
    const previous = registry.previous;
    // The walk runs to its end before this call returns (unless animations run, and then
    // what changes meanwhile drops the reading, as a change after it would): what the page
    // changes from here on is a change after the snapshot.
    const snapshot = tw.snapshot({ viewportExpansion, painted: true, readingAhead: true });
    const entry = { viewportExpansion, snapshot, previous, taken: performance.now(), dirty: false, where: placement() };
    const observer = new MutationObserver(() => { entry.dirty = true; });
    const options = { subtree: true, childList: true, attributes: true, characterData: true };
    observer.observe(document, options);
    for (const ref of registry.shadowRoots) {
      const root = ref.deref();
      if (root) observer.observe(root, options);
    }
    entry.stop = () => {
      if (observer.takeRecords().length) entry.dirty = true;
      observer.disconnect();
    };
    snapshot.catch(() => { entry.dirty = true; });
    ahead = entry;
  };

  /** The snapshot read ahead, when it fits this request and nothing changed since; else null
   * (and it is forgotten either way). */
  tw.takeAhead = function takeAhead({ viewportExpansion, screen }) {
    const entry = endAhead();
    if (!entry) return null;
    const fits = !entry.dirty && screen == null && entry.viewportExpansion === viewportExpansion
      && performance.now() - entry.taken <= AHEAD_MAX_MS && placement() === entry.where;
    if (!fits) {
      registry.previous = entry.previous;
      return null;
    }
    tw.aheadUsed = (tw.aheadUsed ?? 0) + 1;
    return entry.snapshot;
  };

  /** Any other request than the snapshot voids a snapshot read ahead. */
  tw.dropAhead = dropAhead;
})();
