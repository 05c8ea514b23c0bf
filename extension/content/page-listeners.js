// Runs in the page's own JavaScript world while a task runs: at document_start, before the
// page's scripts, in pages that load during the task; injected later into a page that was
// there before it (extension/page-scripts.js).
//
// Why: a listener added with addEventListener is invisible from the content script's isolated
// world, yet "a div that only has a click listener" is a button to a person. This script notes
// every element that gets a click-like listener (or an on-click property) and, when the indexer
// asks, points each live one out by dispatching a `tabwright:has-listener` event on it. It keeps
// weak references only, changes no behaviour of the page, and answers no one but the indexer's
// request event. Injected into a page already running, it finds the on-click properties set
// so far; listeners added before it came stay unseen (only the debugger could list them, and
// attaching it shows the person Chrome's debugging bar). When the task is over
// (`tabwright:task-over`) it puts the page's own functions back and goes.
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
  const removeListener = EventTarget.prototype.removeEventListener;
  const originalDescriptor = Object.getOwnPropertyDescriptor(EventTarget.prototype, 'addEventListener');
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
  Object.defineProperty(EventTarget.prototype, MARK, { value: true, configurable: true });

  const PROPERTIES = ['onclick', 'onmousedown', 'onpointerdown'];
  const replaced = []; // [property, the original descriptor, ours]
  for (const property of PROPERTIES) {
    const descriptor = Object.getOwnPropertyDescriptor(HTMLElement.prototype, property);
    if (!descriptor?.set) continue;
    const ours = {
      ...descriptor,
      set(value) {
        try {
          return descriptor.set.call(this, value);
        } finally {
          if (typeof value === 'function') note(this);
        }
      },
    };
    Object.defineProperty(HTMLElement.prototype, property, ours);
    replaced.push([property, descriptor, ours.set]);
  }

  // Came after the page's scripts: the on-click properties they set so far (in open shadow
  // roots too).
  if (document.readyState !== 'loading') {
    try {
      /** @type {(Document | ShadowRoot)[]} */
      const roots = [document];
      for (let r = 0; r < roots.length && tracked.length < MAX_TRACKED; r++) {
        for (const el of roots[r].querySelectorAll('*')) {
          if (el.shadowRoot) roots.push(el.shadowRoot);
          for (const property of PROPERTIES) {
            if (typeof el[property] === 'function') {
              note(el);
              break;
            }
          }
        }
      }
    } catch {
      // a page that broke its own DOM methods: nothing found
    }
  }

  const collect = () => {
    const alive = [];
    for (const ref of tracked) {
      const el = ref.deref();
      if (!el) continue;
      alive.push(ref);
      if (el.isConnected) el.dispatchEvent(new CustomEvent('tabwright:has-listener', { composed: true }));
    }
    tracked = alive;
  };
  original.call(document, 'tabwright:collect-listeners', collect, true);

  // The task is over: the page's own functions again (unless the page has since put its own
  // there), and nothing of this script left.
  const over = () => {
    if (EventTarget.prototype.addEventListener === patched) Object.defineProperty(EventTarget.prototype, 'addEventListener', originalDescriptor);
    for (const [property, descriptor, ours] of replaced) {
      if (Object.getOwnPropertyDescriptor(HTMLElement.prototype, property)?.set === ours) {
        Object.defineProperty(HTMLElement.prototype, property, descriptor);
      }
    }
    delete EventTarget.prototype[MARK];
    removeListener.call(document, 'tabwright:collect-listeners', collect, true);
    removeListener.call(document, 'tabwright:task-over', over, true);
    tracked = [];
  };
  original.call(document, 'tabwright:task-over', over, true);
})();
