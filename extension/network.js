// Network activity of the tabs a task works on, so that after an action the core can wait for
// the page's requests to settle instead of sleeping a fixed time.
//
// webRequest listeners are added only while a task runs (added here at top level they would
// wake the service worker for every request the browser makes) and removed when it ends, and
// each listens to one watched tab only: Chrome then sends the worker no event for requests of
// other tabs, nor for the worker's own requests to the LLM.
// Requests that stay open (event streams, long polls) stop counting after a while, so a page
// that never goes quiet only costs the core its cap.
const STALE_MS = 5_000;
// tabId → {pending: Map(requestId → start), last: last activity, started: last request start,
// onStart, onEnd: its listeners}
const watched = new Map();

function record(tab, details, done) {
  if (done) tab.pending.delete(details.requestId);
  else if (details.type !== 'websocket') {
    tab.pending.set(details.requestId, Date.now());
    tab.started = Date.now();
  }
  tab.last = Date.now();
}

export const network = {
  watch(tabId) {
    if (watched.has(tabId)) return;
    const tab = { pending: new Map(), last: Date.now(), started: 0, onStart: null, onEnd: null };
    tab.onStart = (details) => record(tab, details, false);
    tab.onEnd = (details) => record(tab, details, true);
    const filter = { urls: ['<all_urls>'], tabId };
    chrome.webRequest.onBeforeRequest.addListener(tab.onStart, filter);
    chrome.webRequest.onCompleted.addListener(tab.onEnd, filter);
    chrome.webRequest.onErrorOccurred.addListener(tab.onEnd, filter);
    watched.set(tabId, tab);
  },
  unwatchAll() {
    for (const tab of watched.values()) {
      chrome.webRequest.onBeforeRequest.removeListener(tab.onStart);
      chrome.webRequest.onCompleted.removeListener(tab.onEnd);
      chrome.webRequest.onErrorOccurred.removeListener(tab.onEnd);
    }
    watched.clear();
  },
  /** When the tab last started a request (ms since the epoch), 0 if none was seen. */
  lastRequestAt(tabId) {
    return watched.get(tabId)?.started ?? 0;
  },
  /** Milliseconds since the tab's last request started or ended; 0 while one is in flight. */
  idleMs(tabId) {
    const tab = watched.get(tabId);
    if (!tab) return Number.POSITIVE_INFINITY;
    const now = Date.now();
    for (const [id, start] of tab.pending) {
      if (now - start > STALE_MS) tab.pending.delete(id);
    }
    return tab.pending.size > 0 ? 0 : now - tab.last;
  },
};
