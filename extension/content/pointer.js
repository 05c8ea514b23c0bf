// The pointer a person's mouse is: the events Chrome itself makes for a real click, made by a
// script.
//
// A person's mouse travels to what it presses. Chrome then fires, in this order (recorded from
// `Input.dispatchMouseEvent` on tests/e2e/fixtures/hands/event-recorder.html): pointerout and
// pointerleave on what the pointer leaves (innermost first, up to the ancestor both share),
// pointerover and pointerenter on what it enters (outermost first), the same four as mouse
// events, pointermove and mousemove; then pointerdown, mousedown, the focus change, pointerup,
// mouseup and click. Libraries lean on each part: menus of the jQuery era choose the item the
// pointer entered; some lists ignore a press with no movement before it (they take it for the
// release of the press that opened them); some open on mousedown and cancel it to keep focus
// in their own input, so a focus() after it closes them again.
//
// So this replays that sequence from where this frame's pointer last was, with the properties
// Chrome gives each event (`pointerId` 1, `pointerType` mouse, `isPrimary`, `button` -1 for a
// move, `buttons`, `detail` 1 for mousedown, mouseup and click, whole-pixel coordinates for
// mouse events), and moves focus only where Chrome would: on a mousedown that was not cancelled,
// to the nearest focusable element around the one pressed, or away from the focused element
// when there is none. A cancelled pointerdown suppresses mousedown and mouseup, as in Chrome.
// The click is dispatched as Chrome's is (a PointerEvent), so a link, a submit button, a label
// or a checkbox does what it does for a person.
(() => {
  const tw = (globalThis.tabwright ??= {});

  /** Where the pointer last was in this frame, as the page saw it: the element under it and the
   * point. Null until the first move: the first one enters from outside the document. */
  let last = null;

  /** The node above `node` as events see it: its slot, its parent, or (for the top of a
   * shadow tree) the host, never the shadow root itself. */
  function flatParent(node) {
    const up = node.assignedSlot ?? node.parentNode ?? node.host ?? null;
    return up instanceof ShadowRoot ? up.host : up;
  }

  /** The innermost element at (x, y), looking into shadow roots (closed ones too: a real event
   * starts there, and the page outside sees it retargeted to the host, as with a person's). */
  function deepestAt(x, y) {
    let hit = document.elementFromPoint(x, y);
    for (let depth = 0; hit && depth < 20; depth++) {
      const root = tw.shadowRootOf(hit);
      const inner = root?.elementFromPoint?.(x, y);
      if (!inner || inner === hit || !tw.flatContains(hit, inner)) break;
      hit = inner;
    }
    return hit;
  }

  /** `node` and its ancestors in the flat tree, innermost first, the document last. */
  function chain(node) {
    const out = [];
    for (let n = node; n; n = flatParent(n)) {
      out.push(n);
      if (n.nodeType === Node.DOCUMENT_NODE) break;
    }
    return out;
  }

  /** Where the page's window lies on the screen, as near as a script can tell (Chrome's own
   * events carry the real offset; a page that compares screen and client coordinates sees the
   * same difference in every event of one click). */
  function screenOffset() {
    const side = Math.max(0, (outerWidth - innerWidth) / 2);
    return [screenX + side, screenY + Math.max(0, outerHeight - innerHeight - side)];
  }

  /** The init of one event at (x, y): pointer events with fractional coordinates, mouse events
   * with whole pixels, as Chrome makes them. */
  function init(kind, x, y, extra, bubbles = true) {
    const whole = kind === 'mouse';
    const cx = whole ? Math.trunc(x) : x;
    const cy = whole ? Math.trunc(y) : y;
    const [sx, sy] = screenOffset();
    const base = {
      bubbles, cancelable: bubbles, composed: bubbles, view: window,
      clientX: cx, clientY: cy, screenX: cx + (whole ? Math.trunc(sx) : sx), screenY: cy + (whole ? Math.trunc(sy) : sy),
      button: kind === 'pointer' ? -1 : 0, buttons: 0, detail: 0, movementX: 0, movementY: 0, ...extra,
    };
    if (kind !== 'pointer') return base;
    return { pointerId: 1, pointerType: 'mouse', isPrimary: true, width: 1, height: 1, pressure: base.buttons ? 0.5 : 0, ...base };
  }

  const fire = (target, event) => target.dispatchEvent(event);

  /** Moves the pointer to (x, y) over `target`, firing what Chrome fires for one mouse move
   * from where it last was. Returns whether it entered an element it was not over. */
  tw.movePointer = function movePointer(target, x, y) {
    const from = last?.target?.isConnected ? last.target : null;
    const moved = last ? { movementX: Math.round(x - last.x), movementY: Math.round(y - last.y) } : {};
    if (from !== target) {
      const leaving = from ? chain(from) : [];
      const entering = chain(target);
      const shared = leaving.find((n) => entering.includes(n));
      const left = shared ? leaving.slice(0, leaving.indexOf(shared)) : leaving;
      const entered = (shared ? entering.slice(0, entering.indexOf(shared)) : entering).reverse();
      for (const kind of ['pointer', 'mouse']) {
        const Event = kind === 'pointer' ? PointerEvent : MouseEvent;
        if (from) fire(from, new Event(`${kind}out`, init(kind, x, y, { relatedTarget: target })));
        for (const n of left) fire(n, new Event(`${kind}leave`, init(kind, x, y, { relatedTarget: target }, false)));
        fire(target, new Event(`${kind}over`, init(kind, x, y, { relatedTarget: from })));
        for (const n of entered) fire(n, new Event(`${kind}enter`, init(kind, x, y, { relatedTarget: from }, false)));
      }
    }
    fire(target, new PointerEvent('pointermove', init('pointer', x, y, moved)));
    fire(target, new MouseEvent('mousemove', init('mouse', x, y, moved)));
    last = { target, x, y };
    return from !== target;
  };

  /** Whether a mouse press gives `el` focus: a control, a link with an address, an editable
   * region or an element with a tabindex, enabled and rendered. */
  function takesFocus(el) {
    if (!(el instanceof HTMLElement || el instanceof SVGElement)) return false;
    if (el.matches(':disabled') || el.closest('[inert]')) return false;
    const tag = el.localName;
    const focusable = el.hasAttribute('tabindex')
      || (el instanceof HTMLElement && el.isContentEditable && !el.parentElement?.isContentEditable)
      // A host that hands focus on to its shadow tree (a text field of Material Web).
      || el.shadowRoot?.delegatesFocus === true
      || ((tag === 'a' || tag === 'area') ? el.hasAttribute('href') : el.tabIndex >= 0);
    return focusable && (el.checkVisibility?.() ?? true);
  }

  /** The focused element, looking into open shadow roots. */
  tw.deepActive = function deepActive() {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active;
  };

  /** What a mousedown that was not cancelled does to focus: the nearest focusable element
   * around `target` gets it, or, when there is none, the focused element loses it. */
  function focusFromPress(target) {
    for (let n = target; n && n.nodeType === Node.ELEMENT_NODE; n = flatParent(n)) {
      if (takesFocus(n)) {
        if (tw.deepActive() !== n) n.focus({ preventScroll: true });
        return;
      }
    }
    const active = tw.deepActive();
    if (active instanceof HTMLElement && active !== document.body) active.blur();
  }

  /** A person's click on `el` at (x, y) in this frame's viewport: the pointer's way there, the
   * press with the focus change it makes, the release and the click. `hooks.moved(entered)`
   * runs once the pointer is there, before the press (a caller lets the page answer the hover
   * first);
   * `hooks.focusing` runs the focus change (a caller can tell its consequences apart).
   * Resolves to the element the click went to, once it has been dispatched. */
  tw.personClick = async function personClick(el, x, y, hooks = {}) {
    const hit = deepestAt(x, y);
    // A person's press lands on what is under the pointer; a script's may reach an element
    // something transparent covers, and then stays on it.
    const reachable = hit !== null && tw.flatContains(el, hit);
    const target = reachable ? hit : el;
    const entered = tw.movePointer(target, x, y);
    await hooks.moved?.(entered);
    const pressed = target.isConnected ? target : el;
    const down = fire(pressed, new PointerEvent('pointerdown', init('pointer', x, y, { button: 0, buttons: 1 })));
    if (down) {
      const mousedown = fire(pressed, new MouseEvent('mousedown', init('mouse', x, y, { button: 0, buttons: 1, detail: 1 })));
      if (mousedown) (hooks.focusing ?? ((fn) => fn()))(() => focusFromPress(pressed));
    }
    // The press and the release are two inputs, each a task of its own: what the page queued
    // on the press (a framework's render of the list it opened) runs before the release.
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The release lands on what is under the pointer now: the press may have drawn something
    // there (a list over the control), as it would under a person's hand.
    const released = (reachable ? deepestAt(x, y) : null) ?? (pressed.isConnected ? pressed : el);
    fire(released, new PointerEvent('pointerup', init('pointer', x, y, { button: 0, buttons: 0 })));
    if (down) fire(released, new MouseEvent('mouseup', init('mouse', x, y, { button: 0, buttons: 0, detail: 1 })));
    last = { target: released, x, y };
    // The click goes to the element both the press and the release reached (their nearest
    // shared ancestor when they differ), as Chrome sends it.
    const pressChain = chain(pressed);
    const clicked = chain(released).find((n) => pressChain.includes(n) && n.nodeType === Node.ELEMENT_NODE) ?? el;
    fire(clicked, new PointerEvent('click', { ...init('pointer', x, y, { button: 0, buttons: 0, detail: 1 }), isPrimary: false }));
    return clicked;
  };

  /** The point a person's hand aims at on `el`: the middle of the part of its box in the
   * viewport (of the whole box when none of it is). */
  tw.middleOf = function middleOf(el) {
    const r = el.getBoundingClientRect();
    const left = Math.max(r.left, 0);
    const right = Math.min(r.right, innerWidth);
    const top = Math.max(r.top, 0);
    const bottom = Math.min(r.bottom, innerHeight);
    return right > left && bottom > top ? [(left + right) / 2, (top + bottom) / 2] : [r.left + r.width / 2, r.top + r.height / 2];
  };
})();
