// Runs in the page's own JavaScript world at document_start, before the page's scripts.
//
// Why: a listener added with addEventListener is invisible from the content script's isolated
// world, yet "a div that only has a click listener" is a button to a person. This script notes
// every element that gets a click-like listener (or an on-click property) and, when the indexer
// asks, points each live one out by dispatching a `tabwright:has-listener` event on it. It keeps
// weak references only, changes no behaviour of the page, and answers no one but the indexer's
// request event.
(() => {
  const MARK = Symbol.for('tabwright.page-listeners');
  if (EventTarget.prototype[MARK]) return;

  // Built-ins captured now, before the page can replace them.
  const CLICK_EVENTS = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'touchstart', 'touchend']);
  const isClickEvent = Set.prototype.has.bind(CLICK_EVENTS);
  const seen = new WeakSet();
  const hasSeen = WeakSet.prototype.has;
  const addSeen = WeakSet.prototype.add;
  const ElementClass = Element;
  const getPrototype = Object.getPrototypeOf;
  const WeakRefClass = WeakRef;
  let tracked = [];
  const MAX_TRACKED = 50_000;

  /** Whether `target` is an element, without trusting the page's Element[Symbol.hasInstance]. */
  function isElement(target) {
    for (let p = target && getPrototype(target); p; p = getPrototype(p)) if (p === ElementClass.prototype) return true;
    return false;
  }

  function note(target) {
    try {
      if (isElement(target) && !hasSeen.call(seen, target)) {
        addSeen.call(seen, target);
        if (tracked.length >= MAX_TRACKED) tracked = tracked.filter((ref) => ref.deref()?.isConnected);
        tracked[tracked.length] = new WeakRefClass(target);
      }
    } catch {
      // Never let the record-keeping break the page.
    }
  }

  const original = EventTarget.prototype.addEventListener;
  const patched = {
    addEventListener(type, listener, options) {
      try {
        return original.call(this, type, listener, options);
      } finally {
        if (isClickEvent(type)) note(this);
      }
    },
  }.addEventListener;
  Object.defineProperty(EventTarget.prototype, 'addEventListener', { value: patched, writable: true, configurable: true });
  Object.defineProperty(EventTarget.prototype, MARK, { value: true });

  for (const property of ['onclick', 'onmousedown', 'onpointerdown']) {
    const descriptor = Object.getOwnPropertyDescriptor(HTMLElement.prototype, property);
    if (!descriptor?.set) continue;
    Object.defineProperty(HTMLElement.prototype, property, {
      ...descriptor,
      set(value) {
        try {
          return descriptor.set.call(this, value);
        } finally {
          if (typeof value === 'function') note(this);
        }
      },
    });
  }

  original.call(document, 'tabwright:collect-listeners', () => {
    const alive = [];
    for (const ref of tracked) {
      const el = ref.deref();
      if (!el) continue;
      alive.push(ref);
      if (el.isConnected) el.dispatchEvent(new CustomEvent('tabwright:has-listener', { composed: true }));
    }
    tracked = alive;
  }, true);
})();
