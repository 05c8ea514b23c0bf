// Runs in the page's own JavaScript world while a task runs (see page-listeners.js for when).
//
// Why: after an action the worker waits until the page's requests have settled (a search box
// fetching suggestions, a form posting) before it looks again, and it must know whether a click
// that seemed to do nothing sent a request. Chrome's webRequest API would tell, but an extension
// that merely holds its permission makes Chrome route every request of every page through an
// extra hop, task or not; so the page's own fetch and XMLHttpRequest count what they have in
// flight here, and the content script (main.js, `network`) adds the resources the page finished
// loading (the Resource Timing entries it sees itself). A request open longer than STALE_MS
// (an event stream, a long poll) stops counting. When the task is over the page's own functions
// go back. The wrappers are Proxies of the originals, so the page sees the same functions.
(() => {
  const MARK = Symbol.for('tabwright.page-network');
  if (window[MARK]) return;
  Object.defineProperty(window, MARK, { value: true, configurable: true });

  const STALE_MS = 5_000;
  const now = Date.now;
  const listen = EventTarget.prototype.addEventListener;
  const unlisten = EventTarget.prototype.removeEventListener;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const Custom = CustomEvent;
  const stringify = JSON.stringify;
  const pageDocument = document;
  const open = new Map(); // request number → when it started
  let next = 0;
  let lastStart = 0;
  let lastEnd = 0;

  function started() {
    const id = ++next;
    open.set(id, now());
    lastStart = now();
    return id;
  }
  function ended(id) {
    open.delete(id);
    lastEnd = now();
  }

  const hasOwn = Object.prototype.hasOwnProperty;
  const replaced = []; // [object, name, original, proxy, whether the object had it as its own]
  function wrap(object, name, handler) {
    const original = object?.[name];
    if (typeof original !== 'function') return;
    const own = hasOwn.call(object, name);
    const proxy = new Proxy(original, handler);
    object[name] = proxy;
    replaced.push([object, name, original, proxy, own]);
  }

  wrap(window, 'fetch', {
    apply(target, self, args) {
      const result = Reflect.apply(target, self, args);
      try {
        const id = started();
        result.then(() => ended(id), () => ended(id));
      } catch {
        // counting never breaks the page
      }
      return result;
    },
  });
  const XHR = window.XMLHttpRequest?.prototype;
  wrap(XHR, 'send', {
    apply(target, self, args) {
      try {
        const id = started();
        listen.call(self, 'loadend', () => ended(id), { once: true });
      } catch {
        // counting never breaks the page
      }
      return Reflect.apply(target, self, args);
    },
  });
  wrap(navigator, 'sendBeacon', {
    apply(target, self, args) {
      lastStart = lastEnd = now();
      return Reflect.apply(target, self, args);
    },
  });

  // The content script asks; the answer comes back as an event it listens for.
  const collect = () => {
    const at = now();
    for (const [id, start] of open) if (at - start > STALE_MS) open.delete(id);
    const detail = stringify({ in_flight: open.size, last_start: lastStart, last_end: lastEnd });
    dispatch.call(pageDocument, new Custom('tabwright:network', { detail }));
  };
  listen.call(pageDocument, 'tabwright:collect-network', collect, true);

  const over = () => {
    for (const [object, name, original, proxy, own] of replaced) {
      if (object[name] !== proxy) continue; // the page has put its own there since
      if (own) object[name] = original;
      else delete object[name];
    }
    delete window[MARK];
    unlisten.call(pageDocument, 'tabwright:collect-network', collect, true);
    unlisten.call(pageDocument, 'tabwright:task-over', over, true);
  };
  listen.call(pageDocument, 'tabwright:task-over', over, true);
})();
