// The content script's message handler: answers the service worker's requests, one content
// script per frame. Protocol v1 requests:
//   snapshot          — the frame's elements and text (indexer.js) as JSON text, with the
//                       history state
//   highlight, clear_highlights, draw_highlights_now — numbered boxes over elements
//                       (highlight.js): drawn a moment after they are asked for, at once for
//                       a screenshot
//   click, point, input, dropdown_options, select_option, upload, drag — element actions
//                       (executor.js); a
//                       click with `read_after` reads the frame ahead of the next snapshot
//                       request (indexer.js)
//   scroll, find_text, search_page — page tools (page-tools.js)
//   markdown          — the page as markdown (markdown.js, injected only when needed)
//   network           — whether the page's requests have settled: how long since the last
//                       started or ended, 0 while one is in flight (page-network.js counts
//                       fetch and XMLHttpRequest; the resources the page loaded come from its
//                       Resource Timing entries), and when the last one started
//   task_over         — no task runs any more: the scripts take themselves out of the frame
//                       (the page's world first: its functions and dialogs are the page's own
//                       again), see extension/page-scripts.js
// Every request also tells page-dialogs.js (in the page's world) that a task is working here,
// so alert/confirm/prompt answer at once instead of stopping the page; the snapshot reports
// the dialogs answered since the last one.
// Registered scripts run in every tab while a task runs: on arrival a frame asks the worker
// whether its tab is the task's, and takes itself out if not.
// Requests come over a port the worker keeps open to this frame (extension/content-channel.js),
// each as {id, message} and answered as {id, reply}; task_over comes to every frame of a tab as
// a one-off message. Replies are {ok: true, …} or {ok: false, code, message}. Ports and
// messages from anything but this extension's worker are refused, so a page cannot drive
// Tabwright by posting messages.
//
// The worker injects these scripts when no listener answered (the page loaded before the
// task began, or before the extension was reloaded); visibility.js retires whatever an earlier
// injection left.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const PROTOCOL_VERSION = 1;

  /** Whether the tab can go back or forward. The Navigation API sees only this site's entries,
   * so history.length longer than those means pages of other sites around this one; they are
   * taken to lie behind it, where a task that moves forward leaves them. */
  function historyState() {
    const navigation = globalThis.navigation;
    if (!navigation) return { can_go_back: history.length > 1, can_go_forward: false };
    let hidden = false;
    try {
      const known = navigation.entries().length;
      hidden = known > 0 && history.length > known;
    } catch {
      // entries() throws in documents without a usable history
    }
    return { can_go_back: navigation.canGoBack || hidden, can_go_forward: navigation.canGoForward };
  }

  // Dialogs page-dialogs.js answered since the last snapshot, for the model to hear of. The
  // page can fake these events; what they say reaches the model as page text, fenced as such.
  const MAX_DIALOGS = 10;
  let dialogs = [];
  const text = (value) => String(value ?? '').slice(0, 500);
  const dialogReported = (event) => {
    try {
      const d = JSON.parse(event.detail);
      if (dialogs.length < MAX_DIALOGS && ['alert', 'confirm', 'prompt'].includes(d?.kind)) {
        dialogs.push({ kind: d.kind, message: text(d.message), answer: d.answer == null ? null : text(d.answer) });
      }
    } catch {
      // not one of ours
    }
  };
  document.addEventListener('tabwright:dialog', dialogReported, true);
  tw.onRetire(() => document.removeEventListener('tabwright:dialog', dialogReported, true));
  function takeDialogs() {
    const taken = dialogs;
    dialogs = [];
    return taken;
  }

  // The page's network, for the worker's wait after an action (see page-network.js): the
  // latest start and end among the resources the page loaded, from its Resource Timing entries.
  const resources = { lastStart: 0, lastEnd: 0 };
  const noteResources = (entries) => {
    for (const entry of entries) {
      resources.lastStart = Math.max(resources.lastStart, performance.timeOrigin + entry.startTime);
      resources.lastEnd = Math.max(resources.lastEnd, performance.timeOrigin + entry.responseEnd);
    }
  };
  let resourceObserver = null;
  try {
    resourceObserver = new PerformanceObserver((list) => noteResources(list.getEntries()));
    resourceObserver.observe({ type: 'resource', buffered: true });
    tw.onRetire(() => resourceObserver.disconnect());
  } catch {
    // no Resource Timing here: fetch and XMLHttpRequest alone are counted
  }

  function networkState() {
    let counted = { in_flight: 0, last_start: 0, last_end: 0 };
    const heard = (event) => {
      try {
        counted = { ...counted, ...JSON.parse(event.detail) };
      } catch {
        // not page-network.js's
      }
    };
    document.addEventListener('tabwright:network', heard, true);
    document.dispatchEvent(new CustomEvent('tabwright:collect-network'));
    document.removeEventListener('tabwright:network', heard, true);
    if (resourceObserver) noteResources(resourceObserver.takeRecords());
    const now = Date.now();
    const last = Math.max(Number(counted.last_start) || 0, Number(counted.last_end) || 0, resources.lastStart, resources.lastEnd);
    const busy = Number(counted.in_flight) > 0 || document.readyState !== 'complete';
    return {
      quiet_ms: busy ? 0 : Math.max(0, now - last),
      last_request_at: Math.max(Number(counted.last_start) || 0, resources.lastStart),
    };
  }

  /** When the worker looks at the page next (`read_after`), a click that changed the page in
   * place is followed by reading the frame (indexer.js, "Reading ahead") once the page has
   * painted what the click did and run what it does after painting: React runs its effects
   * then (Headless UI gives the rest of the page back after a list closes), and a reading
   * taken before would show the page half-changed. */
  function readAfterClick(clicked, readAfter) {
    // A snapshot request that comes before the reading waits for it and takes it, rather than
    // reading the page a second time after the same paint.
    /** @type {(value?: unknown) => void} */
    let settled = () => {};
    const coming = new Promise((resolve) => { settled = resolve; });
    readingComing = coming;
    coming.then(() => {
      if (readingComing === coming) readingComing = null;
    });
    Promise.resolve(clicked).then((reply) => {
      if (!reply?.ok || !reply.result?.effect || reply.result.navigating) {
        settled();
        return;
      }
      const read = () => {
        tw.actedAt = undefined;
        try {
          tw.readAhead({ viewportExpansion: Number(readAfter.viewport_expansion ?? 0) });
        } finally {
          settled();
        }
      };
      let fallback = null;
      let painted = false;
      const afterPaint = () => {
        if (painted) return;
        painted = true;
        clearTimeout(fallback);
        setTimeout(read, 0);
      };
      requestAnimationFrame(afterPaint);
      // A hidden tab paints no frames.
      fallback = setTimeout(afterPaint, 50);
    }, () => settled());
  }

  /** The reading a click asked for, until it is taken (null when none is on its way). */
  let readingComing = null;

  // Requests that act on the page: once one has answered, the next snapshot gives the page a
  // paint to react in (indexer.js).
  const ACTIONS = new Set(['click', 'input', 'select_option', 'dropdown_options', 'upload', 'drag']);

  function handle(message) {
    const reply = answer(message);
    if (ACTIONS.has(message?.type)) {
      const noted = () => { tw.actedAt = performance.now(); };
      Promise.resolve(reply).then(noted, noted);
    }
    return reply;
  }

  /**
   * The reply to one of the worker's requests (typed as the core writes them), or a promise of it.
   * @param {import('tabwright-types/from-core').ContentRequest | {type?: undefined, v?: undefined}} message
   * @returns {import('tabwright-types/to-core').ContentReply | Promise<import('tabwright-types/to-core').ContentReply>}
   */
  function answer(message) {
    if (message?.type !== 'task_over') document.dispatchEvent(new CustomEvent('tabwright:task-active'));
    if (message?.v !== PROTOCOL_VERSION) {
      return { ok: false, code: 'version', message: `content script speaks protocol ${PROTOCOL_VERSION}, got ${message?.v}; reload the page` };
    }
    // A reading ahead stays for the snapshot only while nothing else is asked of the page
    // (asking how its network is doing changes nothing).
    if (message.type !== 'snapshot' && message.type !== 'network') tw.dropAhead?.();
    switch (message.type) {
      case 'snapshot': {
        const wanted = { viewportExpansion: Number(message.viewport_expansion ?? 0), screen: message.screen ?? null };
        return Promise.resolve(readingComing)
          .then(() => tw.takeAhead?.(wanted) ?? tw.snapshot({ ...wanted, worker: typeof message.worker === 'string' ? message.worker : null }))
          .then((snapshot) => ({ ok: true, snapshot_json: JSON.stringify(snapshot), result: { ...historyState(), dialogs: takeDialogs() } }));
      }
      case 'highlight': {
        // Answered once the boxes are painted (or will not be), so a screenshot taken after the
        // answer shows them.
        const { shown, painted } = tw.showHighlights(Array.isArray(message.labels) ? message.labels : []);
        return painted.then(() => ({ ok: true, shown }));
      }
      case 'draw_highlights_now': return tw.drawHighlightsNow().then(() => ({ ok: true }));
      case 'clear_highlights': tw.clearHighlights(); return { ok: true };
      case 'task_over':
        // Answered first: the worker waits for the answer.
        setTimeout(takeOut, 0);
        return { ok: true };
      case 'click': {
        const clicked = tw.click(message.index, message.expect ?? undefined);
        if (message.read_after) readAfterClick(clicked, message.read_after);
        return clicked;
      }
      case 'point': return tw.point(message.index, message.expect ?? undefined);
      case 'act_facts': return tw.actFactsFor(message.index ?? null, message.point ?? null);
      case 'input': return tw.input(message.index, String(message.text ?? ''), message.clear !== false);
      case 'dropdown_options': return tw.dropdownOptions(message.index);
      case 'select_option': return tw.selectOption(message.index, String(message.text ?? ''), message.then);
      case 'drag': return tw.drag(message.index, Number.isInteger(message.to_index) ? message.to_index : null,
        Array.isArray(message.to_point) ? message.to_point.map(Number) : null);
      case 'upload': return tw.upload(message.index, String(message.name ?? ''), String(message.mime ?? ''), String(message.data ?? ''));
      case 'scroll': return tw.scroll(message.down !== false, message.pages ?? 1, message.index ?? null);
      case 'find_text': return tw.findText(String(message.text ?? ''));
      case 'search_page': return tw.searchPage(message.pattern, message.regex === true, message.max_matches, message.context);
      case 'elements_added': return tw.elementsAdded();
      case 'late_click_effect': return tw.lateClickEffect(message.index, message.again === true);
      case 'network': return { ok: true, result: networkState() };
      case 'history_go': history.go(message.delta === 1 ? 1 : -1); return { ok: true };
      case 'markdown': return tw.markdown ? tw.markdown() : { ok: false, code: 'unsuitable', message: 'the markdown converter is not loaded' };
      // Every request the core writes is handled above (tsc checks it); one from elsewhere is not.
      default: return { ok: false, code: 'unknown', message: `unknown request type ${/** @type {{type?: string}} */ (message).type}` };
    }
  }

  /** Answers `message` through `send`; true when the answer comes later. */
  function respond(message, send) {
    const failed = (error) => ({ ok: false, code: 'exception', message: String(error?.message ?? error) });
    let reply;
    try {
      reply = handle(message);
    } catch (error) {
      send(failed(error));
      return false;
    }
    if (reply instanceof Promise) {
      reply.then(send, (error) => send(failed(error)));
      return true;
    }
    send(reply);
    return false;
  }

  // The worker's requests come over a port it keeps open to this frame (content-channel.js);
  // the task's end comes to every frame as a one-off message.
  const PORT_NAME = 'tabwright-content';
  // Only Tabwright's service worker, as Chrome names the sender: this extension, no tab, no
  // document, at the worker's own script (the one the manifest names). Another extension's
  // messages never reach these listeners, and this extension's pages (the side panel, the
  // options page) are not answered either: what a page may do goes through the worker.
  const background = /** @type {{service_worker?: string}} */ (chrome.runtime.getManifest().background ?? {});
  const WORKER_URL = chrome.runtime.getURL(background.service_worker ?? 'boot.js');
  const fromWorker = (sender) => sender?.id === chrome.runtime.id && !sender.tab
    && sender.documentId === undefined && sender.url === WORKER_URL;

  const listener = (message, sender, sendResponse) => {
    if (!fromWorker(sender)) return false;
    return respond(message, sendResponse); // true: answered asynchronously
  };
  chrome.runtime.onMessage.addListener(listener);

  const ports = new Set();
  const portListener = (port) => {
    if (port.name !== PORT_NAME) return;
    if (!fromWorker(port.sender)) {
      port.disconnect();
      return;
    }
    ports.add(port);
    port.onDisconnect.addListener(() => ports.delete(port));
    port.onMessage.addListener((envelope) => {
      respond(envelope?.message, (reply) => {
        try {
          port.postMessage({ id: envelope.id, reply });
        } catch {
          // the worker closed the port (its task ended, or it was stopped)
        }
      });
    });
  };
  chrome.runtime.onConnect.addListener(portListener);
  tw.onRetire(() => {
    chrome.runtime.onMessage.removeListener(listener);
    chrome.runtime.onConnect.removeListener(portListener);
    for (const port of ports) port.disconnect();
    ports.clear();
  });

  /** Takes the scripts out of this frame: the page's world puts its own functions back, then
   * everything here goes. */
  function takeOut() {
    document.dispatchEvent(new CustomEvent('tabwright:task-over'));
    tw.retire();
  }

  // Registered scripts run in every frame of every tab while a task runs; only the task's tabs
  // keep them. A worker that cannot be asked (the extension reloaded) keeps nothing either.
  chrome.runtime.sendMessage({ to: 'page-scripts' }).then((reply) => {
    if (reply?.wanted !== true) takeOut();
  }, takeOut);
})();
