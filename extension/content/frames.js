// Which Chrome frame is behind an <iframe> element? Chrome gives content scripts no direct
// answer (runtime.getFrameId exists only in Firefox), and guessing by size, name or URL goes
// wrong on real pages. The exact way: every frame's content script learns its own frame id from
// the worker (the sender's frameId of a message it sends), and tells its parent window by
// postMessage when asked. The parent matches the message's `source` — the child's window
// itself — against each iframe's contentWindow, which is an identity, not a guess.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const TAG = 'tabwright-frame';
  // Child window → Chrome frame id. Keyed by the window, not the <iframe> element: moving an
  // iframe in the document gives it a new window and a new frame id.
  const known = new WeakMap();
  const pending = new Set(); // one entry per snapshot waiting for ids: {frames, wake}
  let ownId = null;

  /** This frame's Chrome frame id, asked of the worker the first time a parent wants it. */
  function ownFrameId() {
    ownId ??= chrome.runtime.sendMessage({ to: 'frame-id' }).then((id) => {
      if (!(Number.isInteger(id) && id > 0)) ownId = null; // ask again next time
      return id;
    }, () => {
      ownId = null;
      return null;
    });
    return ownId;
  }

  addEventListener('message', (event) => {
    // Only our parent's questions and our children's answers are of interest; checking the
    // source first keeps the cost off the page's own messages.
    const fromParent = event.source === parent && parent !== window;
    if (!fromParent && !pending.size) return;
    const data = event.data;
    if (!data || typeof data !== 'object' || data.tag !== TAG) return;
    if (data.kind === 'who' && fromParent) {
      ownFrameId().then((id) => {
        if (Number.isInteger(id) && id > 0) parent.postMessage({ tag: TAG, kind: 'id', id }, '*');
      });
    } else if (data.kind === 'id' && Number.isInteger(data.id) && data.id > 0 && event.source) {
      for (const call of pending) {
        if (call.frames.some((el) => el.contentWindow === event.source)) {
          known.set(event.source, data.id);
          call.wake?.();
        }
      }
    }
  });

  /** Resolves to the frame id of each iframe in `frames` (-1 when unknown) once all are known,
   * or after `timeoutMs`. */
  tw.frameIdsFor = async function frameIdsFor(frames, timeoutMs = 300) {
    const unknown = () => frames.filter((el) => el.contentWindow && !known.has(el.contentWindow));
    let missing = unknown();
    if (missing.length) {
      const call = { frames: missing, wake: null };
      pending.add(call);
      try {
        for (const el of missing) el.contentWindow.postMessage({ tag: TAG, kind: 'who' }, '*');
        const deadline = Date.now() + timeoutMs;
        while ((missing = unknown()).length && Date.now() < deadline) {
          await new Promise((resolve) => {
            call.wake = resolve;
            setTimeout(resolve, Math.max(0, deadline - Date.now()));
          });
        }
      } finally {
        pending.delete(call);
      }
    }
    return frames.map((el) => (el.contentWindow && known.get(el.contentWindow)) ?? -1);
  };
})();
