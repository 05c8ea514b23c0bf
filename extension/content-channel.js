// Requests from the core to the content script of one frame, over a port kept open per frame.
//
// chrome.tabs.sendMessage opens a channel, finds the frame's listener, delivers, answers and
// closes the channel again for every message: about 2.5 ms a round trip on a quiet machine,
// where a message on an open port takes about 1 ms. A step asks the page at least twice (the
// action, then the snapshot), so the core keeps one port per frame for as long as the frame
// keeps its document, and opens a new one when Chrome closes it.
//
// A port belongs to the document it was opened to: when the frame navigates, or the page goes
// into the back/forward cache, Chrome closes it, and the requests waiting on it fail as a
// sendMessage would ("The message port closed before a response was received."). A request that
// is safe to repeat and was sent on a port that closed before answering is sent once more on a
// new port: it may have gone out just before the old document went away, and the frame now
// shows a new one. Nothing that acts on the page is repeated (a click must not run twice),
// unless Chrome refused to send it at all.
// A frame with no content script closes the port at once, with Chrome's "Could not establish
// connection. Receiving end does not exist.", which the core answers by injecting the scripts.
const PORT_NAME = 'tabwright-content';
const CLOSED = 'The message port closed before a response was received.';
const ENDED = 'The task ended before the page answered.';
// Requests that only read the page or draw over it: asking again changes nothing.
const REPEATABLE = new Set(['snapshot', 'highlight', 'clear_highlights', 'draw_highlights_now', 'point', 'elements_added', 'dropdown_options', 'search_page', 'markdown']);

const channels = new Map(); // `${tabId}:${frameId}` → {port, pending: Map(id → {resolve, reject}), next}
// Counts the ends of tasks, by tab: a request from before the last one in its tab is not sent
// again.
const endedIn = new Map(); // tabId → count

function open(tabId, frameId) {
  const key = `${tabId}:${frameId}`;
  const port = chrome.tabs.connect(tabId, { frameId, name: PORT_NAME });
  const channel = { port, pending: new Map(), next: 1 };
  port.onMessage.addListener((envelope) => {
    const waiting = channel.pending.get(envelope?.id);
    if (!waiting) return;
    channel.pending.delete(envelope.id);
    waiting.resolve(envelope.reply);
  });
  port.onDisconnect.addListener(() => {
    const why = chrome.runtime.lastError?.message ?? CLOSED;
    if (channels.get(key) === channel) channels.delete(key);
    for (const waiting of channel.pending.values()) waiting.reject(new Error(why));
    channel.pending.clear();
  });
  channels.set(key, channel);
  return channel;
}

/** Sends `message` on the frame's port, opening one if needed. A port Chrome has already
 * closed refuses the message outright: it was not delivered, so it goes on a new port. */
function send(tabId, frameId, message, fresh = false) {
  const key = `${tabId}:${frameId}`;
  const channel = channels.get(key) ?? open(tabId, frameId);
  return new Promise((resolve, reject) => {
    const id = channel.next++;
    channel.pending.set(id, { resolve, reject });
    try {
      channel.port.postMessage({ id, message });
    } catch {
      // The disconnect event is still on its way.
      channel.pending.delete(id);
      if (channels.get(key) === channel) channels.delete(key);
      if (fresh) reject(new Error(CLOSED));
      else resolve(send(tabId, frameId, message, true));
    }
  });
}

export const contentChannel = {
  /** The reply of the content script in frame `frameId` of tab `tabId` to `message`. */
  async ask(tabId, frameId, message) {
    const during = endedIn.get(tabId) ?? 0;
    try {
      return await send(tabId, frameId, message);
    } catch (error) {
      if (error.message !== CLOSED || !REPEATABLE.has(message?.type) || during !== (endedIn.get(tabId) ?? 0)) throw error;
      return send(tabId, frameId, message);
    }
  },
  /** Closes the ports to the frames of these tabs (their task is over; other tasks' tabs keep
   * theirs): the pages' scripts let go of them too. What still waits fails and is not sent
   * again (a late highlight would draw boxes after the task). */
  closeTabs(tabIds) {
    const closing = new Set(tabIds);
    for (const tabId of closing) endedIn.set(tabId, (endedIn.get(tabId) ?? 0) + 1);
    for (const [key, channel] of channels) {
      if (!closing.has(Number(key.split(':')[0]))) continue;
      try {
        channel.port.disconnect();
      } catch {
        // already closed
      }
      for (const waiting of channel.pending.values()) waiting.reject(new Error(ENDED));
      channels.delete(key);
    }
  },
};
