// Runs in the page's own JavaScript world while a task runs (see page-listeners.js for when),
// and puts the page's own attachShadow back when the task is over.
//
// Why: a closed shadow root is found from the content script's world only by asking
// chrome.dom.openOrClosedShadowRoot, which costs as much as measuring a box; asked of every
// div and span on every snapshot it is a tenth of the indexer's time. The indexer therefore asks
// each element once and remembers the answer (indexer.js). That memory goes stale only when the
// page attaches a closed root to an element already asked about; this script says when that
// happens, by a `tabwright:closed-shadow-root` event on the document, and the indexer then
// forgets which elements had none. It changes no behaviour of the page: attachShadow does what
// it did, and the event carries nothing.
(() => {
  const MARK = Symbol.for('tabwright.page-shadow-roots');
  if (Element.prototype[MARK]) return;

  // Built-ins captured now, before the page can replace them.
  const original = Element.prototype.attachShadow;
  const originalDescriptor = Object.getOwnPropertyDescriptor(Element.prototype, 'attachShadow');
  const listen = EventTarget.prototype.addEventListener;
  const unlisten = EventTarget.prototype.removeEventListener;
  const modeOf = Object.getOwnPropertyDescriptor(ShadowRoot.prototype, 'mode').get;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const EventClass = Event;
  const pageDocument = document;

  const patched = {
    attachShadow(init) {
      const root = original.call(this, init);
      try {
        if (modeOf.call(root) === 'closed') dispatch.call(pageDocument, new EventClass('tabwright:closed-shadow-root'));
      } catch {
        // Never let the report break the page.
      }
      return root;
    },
  }.attachShadow;
  Object.defineProperty(Element.prototype, 'attachShadow', { value: patched, writable: true, configurable: true });
  Object.defineProperty(Element.prototype, MARK, { value: true, configurable: true });

  const over = () => {
    if (Element.prototype.attachShadow === patched) Object.defineProperty(Element.prototype, 'attachShadow', originalDescriptor);
    delete Element.prototype[MARK];
    unlisten.call(pageDocument, 'tabwright:task-over', over, true);
  };
  listen.call(pageDocument, 'tabwright:task-over', over, true);
})();
