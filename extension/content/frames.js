// Which Chrome frame is behind an <iframe> element? Chrome gives content scripts no direct
// answer (runtime.getFrameId exists only in Firefox), and guessing by size, name or URL goes
// wrong on real pages. The exact way: every frame's content script learns its own frame id from
// the worker (the sender's frameId of a message it sends), and tells its parent window by
// postMessage when asked. The parent matches the message's `source` — the child's window
// itself — against each iframe's contentWindow, which is an identity, not a guess.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const TAG = 'tabwright-frame';
  const known = new WeakMap(); // iframe element → Chrome frame id
  let waiting = []; // iframe elements whose id is awaited
  let wake = null;
  let ownId = null;

  /** This frame's Chrome frame id, asked once of the worker. */
  function ownFrameId() {
    ownId ??= chrome.runtime.sendMessage({ to: 'frame-id' }).catch(() => null);
    return ownId;
  }

  addEventListener('message', (event) => {
    const data = event.data;
    if (!data || data.tag !== TAG) return;
    if (data.kind === 'who' && event.source === parent && parent !== window) {
      ownFrameId().then((id) => {
        if (Number.isInteger(id) && id > 0) parent.postMessage({ tag: TAG, kind: 'id', id }, '*');
      });
    } else if (data.kind === 'id' && Number.isInteger(data.id) && data.id > 0) {
      const el = waiting.find((frame) => frame.contentWindow === event.source);
      if (el) {
        known.set(el, data.id);
        wake?.();
      }
    }
  });

  /** Resolves when every iframe in `frames` has a known frame id, or after `timeoutMs`. */
  tw.frameIdsFor = async function frameIdsFor(frames, timeoutMs = 300) {
    const unknown = () => frames.filter((el) => !known.has(el) && el.contentWindow);
    let missing = unknown();
    if (missing.length) {
      waiting = missing;
      for (const el of missing) el.contentWindow.postMessage({ tag: TAG, kind: 'who' }, '*');
      const deadline = Date.now() + timeoutMs;
      while ((missing = unknown()).length && Date.now() < deadline) {
        await new Promise((resolve) => {
          wake = resolve;
          setTimeout(resolve, Math.max(0, deadline - Date.now()));
        });
      }
      waiting = [];
      wake = null;
    }
    return frames.map((el) => known.get(el) ?? -1);
  };

  ownFrameId();
})();
