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

  const CLICK_EVENTS = new Set(['click', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'dblclick', 'touchstart', 'touchend']);
  const seen = new WeakSet();
  let tracked = [];

  function note(target) {
    if (target instanceof Element && !seen.has(target)) {
      seen.add(target);
      tracked.push(new WeakRef(target));
    }
  }

  const original = EventTarget.prototype.addEventListener;
  const patched = {
    addEventListener(type, listener, options) {
      if (CLICK_EVENTS.has(type)) note(this);
      return original.call(this, type, listener, options);
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
        if (typeof value === 'function') note(this);
        return descriptor.set.call(this, value);
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
