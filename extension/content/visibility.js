// Can a person see this element, and would a click on it reach it?
//
//   isRendered(el)        — not hidden by CSS: display, visibility, opacity, content-visibility,
//                           on the element or an ancestor (checkVisibility does the walk). One
//                           exception: a transparent file input laid over a styled box is the
//                           classic upload button — a click there reaches it — so opacity does
//                           not hide a file input (it must still be top-most).
//   hasSize(rect)         — a box with area.
//   inExpandedViewport    — within the viewport grown by the viewport-expansion setting
//                           (default 500 px; -1 = the whole page), so the model also sees what
//                           is just out of view.
//   isTopMost(el, rect)   — a hit test at the element's visible point(s) lands on the element or
//                           inside it, so a modal or sticky header covering it hides it. Shadow
//                           aware: the test asks the element's own root (document or shadow
//                           root). Elements outside the real viewport cannot be hit-tested and
//                           count as top-most.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const RENDER_CHECK = { opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true };

  const RENDER_CHECK_IGNORING_OPACITY = { visibilityProperty: true, contentVisibilityAuto: true };

  tw.isRendered = function isRendered(el) {
    if (!el.checkVisibility) return true;
    const fileInput = el.localName === 'input' && el.type === 'file';
    return el.checkVisibility(fileInput ? RENDER_CHECK_IGNORING_OPACITY : RENDER_CHECK);
  };

  tw.hasSize = function hasSize(rect) {
    return rect.width > 0 && rect.height > 0;
  };

  tw.inExpandedViewport = function inExpandedViewport(rect, expansion) {
    if (expansion < 0) return true;
    return rect.bottom >= -expansion && rect.top <= innerHeight + expansion
      && rect.right >= -expansion && rect.left <= innerWidth + expansion;
  };

  /** The points a click would aim at: the centre of the part of the box inside the viewport,
   * then two points further in, for elements partly covered (a sticky header over a row). */
  function probePoints(rect) {
    const left = Math.max(rect.left, 0);
    const right = Math.min(rect.right, innerWidth);
    const top = Math.max(rect.top, 0);
    const bottom = Math.min(rect.bottom, innerHeight);
    if (right - left < 1 || bottom - top < 1) return null;
    const w = right - left;
    const h = bottom - top;
    return [
      [left + w / 2, top + h / 2],
      [left + w / 4, top + h / 4],
      [left + (3 * w) / 4, top + (3 * h) / 4],
    ];
  }

  tw.isTopMost = function isTopMost(el, rect) {
    const points = probePoints(rect);
    if (!points) return true; // outside the real viewport: nothing to test against
    const root = el.getRootNode();
    const tester = typeof root.elementFromPoint === 'function' ? root : document;
    for (const [x, y] of points) {
      const hit = tester.elementFromPoint(x, y);
      if (hit && (hit === el || el.contains(hit))) return true;
    }
    return false;
  };

  /** Whether the element is a scrollable container, and how far it scrolls. */
  tw.scrollOf = function scrollOf(el, style) {
    const overflowY = style.overflowY;
    if (overflowY !== 'auto' && overflowY !== 'scroll' && overflowY !== 'overlay') return null;
    const range = el.scrollHeight - el.clientHeight;
    if (range <= 4) return null;
    const above = Math.max(0, Math.round(el.scrollTop));
    return { above_px: above, below_px: Math.max(0, Math.round(range - el.scrollTop)) };
  };
})();
