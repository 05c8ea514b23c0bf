// The content script's message handler: answers the service worker's requests (protocol v1:
// snapshot, highlight, clear_highlights, click, input), one content script per frame. Messages from anything but this extension are ignored, so a page
// cannot drive Tabwright by posting messages.
//
// The worker injects these scripts only when no listener answered, e.g. after the extension was
// reloaded and the old listener died with it; so this file replaces any earlier listener instead
// of skipping registration.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const PROTOCOL_VERSION = 1;

  function handle(message) {
    if (message?.v !== PROTOCOL_VERSION) {
      return { ok: false, code: 'version', message: `content script speaks protocol ${PROTOCOL_VERSION}, got ${message?.v}; reload the page` };
    }
    switch (message.type) {
      case 'snapshot': return tw.snapshot({
        viewportExpansion: Number(message.viewport_expansion ?? 500),
        screen: message.screen ?? null,
      }).then((snapshot) => ({ ok: true, snapshot }));
      case 'highlight': return { ok: true, shown: tw.showHighlights(Array.isArray(message.labels) ? message.labels : []) };
      case 'clear_highlights': tw.clearHighlights(); return { ok: true };
      case 'click': return tw.click(message.index);
      case 'input': return tw.input(message.index, String(message.text ?? ''), message.clear !== false);
      default: return { ok: false, code: 'unknown', message: `unknown request type ${message.type}` };
    }
  }

  if (tw.listener) {
    try { chrome.runtime.onMessage.removeListener(tw.listener); } catch { /* from a dead extension instance */ }
  }
  tw.listener = (message, sender, sendResponse) => {
    if (sender.id !== chrome.runtime.id || sender.tab) return false;
    const failed = (error) => ({ ok: false, code: 'exception', message: String(error?.message ?? error) });
    let reply;
    try {
      reply = handle(message);
    } catch (error) {
      sendResponse(failed(error));
      return false;
    }
    if (reply instanceof Promise) {
      reply.then(sendResponse, (error) => sendResponse(failed(error)));
      return true; // answered asynchronously
    }
    sendResponse(reply);
    return false;
  };
  chrome.runtime.onMessage.addListener(tw.listener);
})();
