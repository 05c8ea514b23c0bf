// Can a person see this element, and would a click on it reach it?
//
//   isRendered(el)        — not hidden by CSS: display, visibility, opacity, content-visibility,
//                           on the element or an ancestor (checkVisibility does the walk).
//   isClickable(el)       — the same, opacity aside, for elements a click may reach: a transparent
//                           element that is still top-most at its own box is what a click there
//                           hits, so it is there for clicking — a "stretched" link laid over a
//                           card with opacity 0, the transparent file input over a styled upload
//                           button. Its box must be more than a sliver (MIN_CLICK_PX): a 1 px
//                           transparent checkbox is the visually-hidden pattern, and its label is
//                           what a person clicks (interactive.js); and it must not be
//                           aria-hidden (a field kept under the control that shows its value).
//   hasSize(rect)         — a box with area.
//   inExpandedViewport    — within the viewport, grown vertically by the viewport-expansion
//                           setting when the user wants the model to see what is just above or
//                           below (default 0: what is on screen; -1 = the whole page); sideways
//                           it must overlap the viewport (an off-canvas drawer is not on screen).
//   isTopMost(el, rect)   — a hit test at the element's visible point(s) lands on the element or
//                           inside it (in the flat tree: slotted content counts as inside its
//                           slot's element), so a modal or sticky header covering it hides it.
//                           An inline element that wraps over lines (a long link in a paragraph)
//                           is tested in each of its line boxes: the centre of its bounding box
//                           may lie on the paragraph's own words; and an inline element around
//                           blocks (a menu link holding divs), whose row box may be covered in
//                           its empty part, at its first words. Shadow aware: the test asks the
//                           element's own root. Elements outside the real viewport cannot be
//                           hit-tested and count as top-most.
//   isUncovered(el, rect) — the same for text: a hit on the element, inside it, or on one of its
//                           ancestors (text in a pointer-events: none span is still seen).
//   outsideModal(el)      — a modal dialog is open and the element is not in it: Chrome makes
//                           everything else inert.
//   visibleRegion()       — the visible part of the frame, in its own coordinates.
//   lineBoxes(el)         — the line boxes of an element that wraps, for aiming a real click.
//   wordBoxes(el)         — the boxes of its first words, likewise, for an element of several boxes.
//
// "The viewport" is the part of this frame a person can see: the window, and for a frame inside
// a page, only the part of it on the top window's screen (setScreen) — a tall embedded frame's
// far end is as far out of view as the page's own.
//
// This file runs first, and starts the frame's scripts afresh: the scripts are taken out again
// when the task is over or the frame's tab is not the task's (main.js), each part undoing what
// it set up in the page (`tw.onRetire`); a second injection into a frame that has them (the
// worker injecting as the task's registered scripts arrive) retires the first.
(() => {
  try {
    globalThis.tabwright?.retire?.();
  } catch {
    // left by an extension instance that is gone
  }
  const tw = (globalThis.tabwright = /** @type {any} */ ({}));
  const undo = [];
  /** Registers how to undo something this frame's scripts set up in the page. */
  tw.onRetire = (fn) => { undo.push(fn); };
  /** Takes this frame's scripts out: listeners, observers and boxes go, and the state with them. */
  tw.retire = () => {
    for (const fn of undo.splice(0).reverse()) {
      try {
        fn();
      } catch {
        // the rest still goes
      }
    }
    if (globalThis.tabwright === tw) delete globalThis.tabwright;
  };

  const RENDER_CHECK = { opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true };

  const RENDER_CHECK_IGNORING_OPACITY = { visibilityProperty: true, contentVisibilityAuto: true };

  // A transparent element smaller than this either way is not offered for clicking.
  const MIN_CLICK_PX = 4;

  tw.isRendered = function isRendered(el) {
    return !el.checkVisibility || el.checkVisibility(RENDER_CHECK);
  };

  /** For an element isRendered refuses: whether only its opacity (or an ancestor's) hides it,
   * and its box is more than a sliver. */
  tw.isClickable = function isClickable(el, rect) {
    return rect.width >= MIN_CLICK_PX && rect.height >= MIN_CLICK_PX && !!el.checkVisibility?.(RENDER_CHECK_IGNORING_OPACITY)
      // Hidden on purpose from people and screen readers alike (a select's value field kept
      // under its display): not a thing to click.
      && !el.closest('[aria-hidden=true]');
  };

  tw.hasSize = function hasSize(rect) {
    return rect.width > 0 && rect.height > 0;
  };

  let screen = null; // the visible part of this frame in its own coordinates, when a parent says
  let held = null; // the visible part as measured for the walk under way

  /** Sets the part of this frame that is on the top window's screen, or null for the window. */
  tw.setScreen = function setScreen(region) {
    screen = region;
  };

  /** Measures the visible part once for a walk, which neither scrolls nor resizes anything:
   * every test until `releaseViewport` uses that measure instead of reading the window's size
   * again for each element. */
  tw.holdViewport = function holdViewport() {
    held = null;
    held = visible();
  };

  tw.releaseViewport = function releaseViewport() {
    held = null;
  };

  // For the hands: whether an element needs scrolling to.
  tw.visibleRegion = visible;

  /** The visible part of the frame: its window, cut to the top screen when known. */
  function visible() {
    if (held) return held;
    if (!screen) return { top: 0, left: 0, bottom: innerHeight, right: innerWidth };
    return {
      top: Math.max(0, screen.top),
      left: Math.max(0, screen.left),
      bottom: Math.min(innerHeight, screen.bottom),
      right: Math.min(innerWidth, screen.right),
    };
  }

  tw.inExpandedViewport = function inExpandedViewport(rect, expansion) {
    if (expansion < 0) return true;
    const v = visible();
    return rect.bottom >= v.top - expansion && rect.top <= v.bottom + expansion && rect.right > v.left && rect.left < v.right;
  };

  /** The next node up in the flat tree: a slotted node's slot, a shadow root's host. */
  function flatParent(node) {
    return node.assignedSlot ?? node.parentNode ?? node.host ?? null;
  }

  /** Whether `inner` is `outer` or inside it in the flat tree. */
  tw.flatContains = function flatContains(outer, inner) {
    for (let n = inner; n; n = flatParent(n)) if (n === outer) return true;
    return false;
  };

  /** The points a click would aim at: the centre of the part of the box inside the viewport,
   * then two points further in, for elements partly covered (a sticky header over a row). */
  function probePoints(rect) {
    const v = visible();
    const left = Math.max(rect.left, v.left);
    const right = Math.min(rect.right, v.right);
    const top = Math.max(rect.top, v.top);
    const bottom = Math.min(rect.bottom, v.bottom);
    if (right - left < 1 || bottom - top < 1) return null;
    const w = right - left;
    const h = bottom - top;
    return [
      [left + w / 2, top + h / 2],
      [left + w / 4, top + h / 4],
      [left + (3 * w) / 4, top + (3 * h) / 4],
    ];
  }

  /** `r` cut to `clip` (null: none), or null when less than a pixel of it is left. */
  function clipped(r, clip) {
    const box = clip
      ? { left: Math.max(r.left, clip.left), top: Math.max(r.top, clip.top), right: Math.min(r.right, clip.right), bottom: Math.min(r.bottom, clip.bottom) }
      : r;
    return box.right - box.left >= 1 && box.bottom - box.top >= 1 ? box : null;
  }

  /** The line boxes of an element that wraps over lines (`rects`, its client rects, when it
   * has several), cut to `clip`. */
  function lineBoxes(rects, clip) {
    const boxes = [];
    for (let i = 0; i < rects.length && boxes.length < 8; i++) {
      const box = clipped(rects[i], clip);
      if (box) boxes.push(box);
    }
    return boxes;
  }

  /** The line boxes of an element that wraps over lines (executor.js aims real clicks at
   * them); an empty list for an element of one box. */
  tw.lineBoxes = (el) => {
    const rects = el.getClientRects();
    return rects.length < 2 ? [] : lineBoxes(rects, null);
  };

  // How many of an element's words are tried, and how far into its text to look for them.
  const MAX_WORD_BOXES = 3;
  const MAX_TEXT_NODES = 40;

  /** The boxes of the first few runs of words of an element, cut to `clip` (null: none). An
   * inline element around blocks (a menu link holding a div of words) has as its own boxes an
   * empty line before the blocks, one spanning the whole row and an empty one after: the row's
   * points may lie on anything drawn over its empty part, and a person aims at the words. */
  function wordBoxes(el, clip) {
    const boxes = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let i = 0; i < MAX_TEXT_NODES && boxes.length < MAX_WORD_BOXES; i++) {
      const node = /** @type {Text | null} */ (walker.nextNode());
      if (!node) break;
      if (!node.data.trim()) continue;
      range.selectNodeContents(node);
      const box = clipped(range.getBoundingClientRect(), clip);
      if (box) boxes.push(box);
    }
    return boxes;
  }

  /** The boxes of an element's first words when it is made of several boxes (executor.js aims
   * real clicks at them when its own boxes are covered); an empty list otherwise. */
  tw.wordBoxes = (el) => (el.getClientRects().length < 2 ? [] : wordBoxes(el, null));

  function hitTest(el, rect, accept) {
    if (!probePoints(rect)) return true; // outside the real viewport: nothing to test against
    // The box's own points first; an element that wraps over lines is tested in its line
    // boxes only when those miss (most elements are one box, and one probe is cheaper), and
    // then at its first words.
    if (hitAt(el, probePoints(rect), accept)) return true;
    // Both need an element of several boxes, asked once.
    const rects = el.getClientRects();
    if (rects.length < 2) return false;
    const lines = lineBoxes(rects, rect).flatMap((box) => probePoints(box) ?? []);
    if (lines.length > 0 && hitAt(el, lines, accept)) return true;
    const words = wordBoxes(el, rect).flatMap((box) => probePoints(box)?.slice(0, 1) ?? []);
    return words.length > 0 && hitAt(el, words, accept);
  }

  function hitAt(el, points, accept) {
    const root = el.getRootNode();
    const tester = typeof root.elementFromPoint === 'function' ? root : document;
    for (const [x, y] of points) {
      const hit = tester.elementFromPoint(x, y);
      if (hit && accept(hit)) return true;
    }
    // Slotted text inside a shadow control (<my-button>Save</my-button>) hits the host, which
    // is the control's ancestor: look through the stack of elements at the point for the first
    // one that is not an ancestor of the element.
    for (const [x, y] of points) {
      for (const hit of tester.elementsFromPoint(x, y)) {
        if (accept(hit)) return true;
        if (!tw.flatContains(hit, el)) break;
      }
    }
    return false;
  }

  tw.isTopMost = function isTopMost(el, rect) {
    return hitTest(el, rect, (hit) => tw.flatContains(el, hit));
  };

  tw.isUncovered = function isUncovered(el, rect) {
    return hitTest(el, rect, (hit) => tw.flatContains(el, hit) || tw.flatContains(hit, el));
  };

  tw.outsideModal = function outsideModal(el, modal) {
    return modal !== null && !tw.flatContains(modal, el);
  };

  /** Whether the element is a scrollable container, and how far it scrolls, given its computed
   * overflow-y. */
  tw.scrollOf = function scrollOf(el, overflowY) {
    if (overflowY !== 'auto' && overflowY !== 'scroll' && overflowY !== 'overlay') return null;
    const range = el.scrollHeight - el.clientHeight;
    if (range <= 4) return null;
    const above = Math.max(0, Math.round(el.scrollTop));
    return { above_px: above, below_px: Math.max(0, Math.round(range - el.scrollTop)) };
  };
})();
