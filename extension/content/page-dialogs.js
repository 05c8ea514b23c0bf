// Runs in the page's own JavaScript world while a task runs (see page-listeners.js for when).
//
// Why: `alert`, `confirm` and `prompt` stop the page's thread until a person answers, and a
// page whose thread is stopped answers no content-script request: a task would hang on the
// first dialog its click caused. While a task works on this page (the content script says so
// with each request, and says when it is over), the three answer at once instead — an alert
// is closed, a confirm is accepted (the agent clicked what asked for it), a prompt gets its
// default — and each dialog is reported to the content script, which tells the model in the
// next step. When the task is over the page's own functions are put back. The wrappers are
// Proxies of the originals, so the page sees the same functions (same name, same `toString`).
(() => {
  const MARK = Symbol.for('tabwright.page-dialogs');
  if (window[MARK]) return;
  Object.defineProperty(window, MARK, { value: true, configurable: true });

  const ACTIVE = 'tabwright:task-active';
  const OVER = 'tabwright:task-over';
  const REPORT = 'tabwright:dialog';
  // A task that goes quiet this long (no request from the content script) is taken to be over.
  const QUIET_MS = 90_000;
  const now = Date.now;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const Custom = CustomEvent;
  const stringify = JSON.stringify;
  const toText = String;
  let activeUntil = 0;

  const listen = EventTarget.prototype.addEventListener;
  const unlisten = EventTarget.prototype.removeEventListener;
  const pageDocument = document;
  const active = () => { activeUntil = now() + QUIET_MS; };
  listen.call(pageDocument, ACTIVE, active, true);

  function report(kind, message, answer) {
    try {
      const detail = stringify({ kind, message: toText(message ?? '').slice(0, 500), answer });
      dispatch.call(document, new Custom(REPORT, { detail }));
    } catch {
      // Reporting must never break the page.
    }
  }

  const answers = {
    alert: () => undefined,
    confirm: () => true,
    prompt: (args) => (args.length > 1 && args[1] !== undefined ? toText(args[1]) : ''),
  };
  const replaced = []; // [name, original, proxy]
  for (const [name, answer] of Object.entries(answers)) {
    const original = window[name];
    if (typeof original !== 'function') continue;
    const proxy = new Proxy(original, {
      apply(target, self, args) {
        if (now() >= activeUntil) return Reflect.apply(target, self, args);
        const value = answer(args);
        report(name, args[0], value === undefined ? null : value);
        return value;
      },
    });
    window[name] = proxy;
    replaced.push([name, original, proxy]);
  }

  // The task is over: the page's own dialogs again (unless it put others there since).
  const over = () => {
    activeUntil = 0;
    for (const [name, original, proxy] of replaced) if (window[name] === proxy) window[name] = original;
    delete window[MARK];
    unlisten.call(pageDocument, ACTIVE, active, true);
    unlisten.call(pageDocument, OVER, over, true);
  };
  listen.call(pageDocument, OVER, over, true);
})();
