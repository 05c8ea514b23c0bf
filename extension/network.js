// Network activity of the tabs a task works on, so that after an action the core can wait for
// the page's requests to settle instead of sleeping a fixed time.
//
// webRequest listeners are added only while a task runs (added here at top level they would
// wake the service worker for every request the browser makes) and removed when it ends.
// Requests that stay open (event streams, long polls) stop counting after a while, so a page
// that never goes quiet only costs the core its cap.
const STALE_MS = 5_000;
const watched = new Map(); // tabId → {pending: Map(requestId → start), last: last activity, started: last request start}
let listening = false;

function record(details, done) {
  const tab = watched.get(details.tabId);
  if (!tab) return;
  if (done) tab.pending.delete(details.requestId);
  else if (details.type !== 'websocket') {
    tab.pending.set(details.requestId, Date.now());
    tab.started = Date.now();
  }
  tab.last = Date.now();
}
const started = (d) => record(d, false);
const finished = (d) => record(d, true);
const FILTER = { urls: ['<all_urls>'] };

export const network = {
  watch(tabId) {
    if (!watched.has(tabId)) watched.set(tabId, { pending: new Map(), last: Date.now(), started: 0 });
    if (listening) return;
    listening = true;
    chrome.webRequest.onBeforeRequest.addListener(started, FILTER);
    chrome.webRequest.onCompleted.addListener(finished, FILTER);
    chrome.webRequest.onErrorOccurred.addListener(finished, FILTER);
  },
  unwatchAll() {
    watched.clear();
    if (!listening) return;
    listening = false;
    chrome.webRequest.onBeforeRequest.removeListener(started);
    chrome.webRequest.onCompleted.removeListener(finished);
    chrome.webRequest.onErrorOccurred.removeListener(finished);
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
