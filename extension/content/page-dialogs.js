// Runs in the page's own JavaScript world at document_start, before the page's scripts.
//
// Why: `alert`, `confirm` and `prompt` stop the page's thread until a person answers, and a
// page whose thread is stopped answers no content-script request: a task would hang on the
// first dialog its click caused. While a task works on this page (the content script says so
// with each request, and says when it is over), the three answer at once instead — an alert
// is closed, a confirm is accepted (the agent clicked what asked for it), a prompt gets its
// default — and each dialog is reported to the content script, which tells the model in the
// next step. Outside a task the page's dialogs are the browser's own, untouched. The wrappers
// are Proxies of the originals, so the page sees the same functions (same name, same
// `toString`).
(() => {
  const MARK = Symbol.for('tabwright.page-dialogs');
  if (window[MARK]) return;
  window[MARK] = true;

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

  document.addEventListener(ACTIVE, () => { activeUntil = now() + QUIET_MS; }, true);
  document.addEventListener(OVER, () => { activeUntil = 0; }, true);

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
  for (const [name, answer] of Object.entries(answers)) {
    const original = window[name];
    if (typeof original !== 'function') continue;
    window[name] = new Proxy(original, {
      apply(target, self, args) {
        if (now() >= activeUntil) return Reflect.apply(target, self, args);
        const value = answer(args);
        report(name, args[0], value === undefined ? null : value);
        return value;
      },
    });
  }
})();
