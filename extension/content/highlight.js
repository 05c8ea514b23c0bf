// Highlights: a numbered box over each element the model can use, so a person watching sees
// what the agent sees. Drawn in a fixed, full-window layer with pointer-events: none inside a
// closed shadow root — it never takes a click, never moves the page's layout, and the page's
// CSS cannot reach it. The indexer empties it before every snapshot, and the worker removes it
// when the task ends (or the task's boxes move to another frame or tab).
//
// The boxes are drawn a moment after they are asked for (DRAW_AFTER_MS), not at once. They are
// for the person, who watches them while the model thinks, and that takes far longer. A model
// that answers sooner is already acting when the boxes would come, and then drawing them only
// competes with the step for the CPU: a new page of boxes is a style, layout and paint of the
// page, and the next snapshot takes them away again. Such boxes are not drawn. A screenshot is
// the exception: the worker asks for the boxes at once (`draw_highlights_now`) before it
// captures the tab.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const PALETTE = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#f032e6', '#9a6324', '#800000', '#808000', '#000075', '#46a0a8'];
  // How long after they are asked for the boxes are drawn (see the top of this file).
  const DRAW_AFTER_MS = 100;
  let layer = null;
  let shown = []; // [global index, element]
  let frame = 0;
  let waiting = null; // boxes asked for and not drawn yet: {timer, painted (a promise), resolve it}

  function ensureLayer() {
    if (tw.highlightHost?.isConnected && layer) return;
    const host = document.createElement('tabwright-highlights');
    host.style.cssText = 'all: initial; position: fixed; inset: 0; pointer-events: none; z-index: 2147483647;';
    const root = host.attachShadow({ mode: 'closed' });
    root.innerHTML = `<style>
      .box { position: fixed; box-sizing: border-box; border: 2px solid; pointer-events: none; }
      .label { position: absolute; top: -2px; right: -2px; font: bold 11px/14px system-ui, sans-serif;
               color: #fff; padding: 0 4px; border-radius: 3px; pointer-events: none; }
    </style><div id="layer"></div>`;
    layer = root.getElementById('layer');
    tw.highlightHost = host;
    document.documentElement.append(host);
  }

  function draw() {
    frame = 0;
    if (!layer) return;
    layer.replaceChildren();
    // Every box is measured before any is added: adding one to the layer invalidates layout, so
    // measuring between additions would lay the document out again for each box.
    const width = innerWidth;
    const height = innerHeight;
    const boxes = [];
    for (const [index, el] of shown) {
      if (!el.isConnected) continue;
      const rect = el.getBoundingClientRect();
      if (rect.bottom < 0 || rect.top > height || rect.right < 0 || rect.left > width) continue;
      boxes.push([index, rect]);
    }
    const fragment = document.createDocumentFragment();
    for (const [index, rect] of boxes) {
      const colour = PALETTE[index % PALETTE.length];
      const box = document.createElement('div');
      box.className = 'box';
      box.style.cssText = `left:${rect.left}px;top:${rect.top}px;width:${rect.width}px;height:${rect.height}px;border-color:${colour};background:${colour}1a;`;
      const label = document.createElement('span');
      label.className = 'label';
      label.style.background = colour;
      label.textContent = String(index);
      box.append(label);
      fragment.append(box);
    }
    layer.append(fragment);
  }

  function redrawSoon() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  /** Resolves after the next frame is painted (two animation frames), or after 100 ms in a
   * tab that paints nothing (hidden). */
  function afterPaint() {
    return new Promise((resolve) => {
      requestAnimationFrame(() => requestAnimationFrame(resolve));
      setTimeout(resolve, 100);
    });
  }

  /** Draws the boxes asked for, at the page's next frame, and from then on after every scroll
   * and resize. */
  function drawWaiting() {
    const pending = waiting;
    waiting = null;
    clearTimeout(pending.timer);
    ensureLayer();
    // Drawn when the page next paints, as after a scroll: nothing drawn sooner would be seen
    // sooner, and a tab in the background is not drawn for until it is shown.
    redrawSoon();
    addEventListener('scroll', redrawSoon, { capture: true, passive: true });
    addEventListener('resize', redrawSoon, { passive: true });
    afterPaint().then(pending.resolve);
  }

  /** Asks for boxes over [[localIndex, globalIndex], …] (labels carry the page-wide numbers),
   * drawn DRAW_AFTER_MS from now unless other boxes or a snapshot come first. Returns how many
   * elements get a box, and a promise that settles once they are painted or will not be. */
  tw.showHighlights = function showHighlights(labels) {
    tw.clearHighlights({ keepLayer: true });
    shown = labels.map(([local, global]) => [global, tw.elementAt(local)]).filter(([, el]) => el);
    if (!shown.length) return { shown: 0, painted: Promise.resolve() };
    let resolve;
    const painted = new Promise((r) => { resolve = r; });
    waiting = { timer: setTimeout(drawWaiting, DRAW_AFTER_MS), painted, resolve };
    return { shown: shown.length, painted };
  };

  /** Draws the boxes asked for now, for a screenshot; resolves once they are on screen (at
   * once when none are waiting: they are drawn already, or there are none). */
  tw.drawHighlightsNow = function drawHighlightsNow() {
    if (!waiting) return Promise.resolve();
    const { painted } = waiting;
    drawWaiting();
    return painted;
  };

  /** Takes the boxes away. With `keepLayer` (between two looks of one task) the empty layer
   * stays in the page for the next boxes, instead of a new shadow tree and style sheet every
   * step, and a page watching its document sees us come and go once a task, not every step. */
  tw.clearHighlights = function clearHighlights({ keepLayer = false } = {}) {
    if (waiting) {
      clearTimeout(waiting.timer);
      waiting.resolve();
      waiting = null;
    }
    removeEventListener('scroll', redrawSoon, { capture: true });
    removeEventListener('resize', redrawSoon);
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    shown = [];
    if (keepLayer) {
      layer?.replaceChildren();
      return;
    }
    tw.highlightHost?.remove();
    tw.highlightHost = null;
    layer = null;
  };
  tw.onRetire(() => tw.clearHighlights());
})();
