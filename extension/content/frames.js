// Which Chrome frame is behind an <iframe> element? Chrome gives content scripts no direct
// answer (runtime.getFrameId exists only in Firefox), and guessing by size, name or URL goes
// wrong on real pages. So the match is made by a token nobody else can have:
//   - a parent asks each child window it shows (postMessage "who");
//   - the child's content script, asked by its own parent window only, gets its frame's token
//     from the worker (a runtime message: the worker issues one token per frame, to the frame
//     that asked by Chrome's own account of the sender) and posts it up to the parent;
//   - the parent takes a token only from the message whose `source` is that iframe's window —
//     an identity, not a guess — and puts it in the frame's placeholder; the worker turns it
//     back into the frame id it was issued to.
// A page cannot forge the match: a child page never sees another frame's token (a token goes
// from the worker to one frame's content script, and from there only to its parent window), so
// it can claim nothing but garbage, which matches no frame. Two tokens from one window in one
// ask void each other. The furthest a child can reach is its own descendants: a grandchild
// posts its token to the child's window, which the child's page sees and could pass up as its
// own — which still places only what lies inside that child, inside that child.
//
// Frames that never answer (no content script: an error page, a PDF, a sandboxed document) are
// not waited for twice: a window asked without an answer is remembered as silent until its
// frame loads a document (the iframe's load event), its scripts arrive late and say so (the
// worker injects them into frames that lack them), or the worker starts afresh; until then it is
// asked again without being waited for. The windows asked at once are all
// waited for together, so one slow frame costs the wait once, not once per frame.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const TAG = 'tabwright-frame';
  const MAX_TOKEN = 64;
  // Per worker instance (a restarted worker knows none of the earlier tokens):
  let worker = null;
  let known = new WeakMap(); // child window → its token
  let silent = new WeakSet(); // child windows asked that did not answer
  let voided = new WeakSet(); // child windows that gave two different tokens
  const greeted = new WeakSet(); // child windows that said their scripts arrived
  let listening = false; // whether this frame ever asked a child
  const waiters = new Set(); // wakes an ask under way when an answer comes

  /** Forgets what was learned under another worker instance. */
  function useWorker(instance) {
    if (!instance || instance === worker) return;
    worker = instance;
    known = new WeakMap();
    silent = new WeakSet();
    voided = new WeakSet();
  }

  // A frame that loads a document (a navigation, a reload) has a new content script, or none.
  const frameLoaded = (event) => {
    const window = event.target?.contentWindow;
    if (window && (event.target.localName === 'iframe' || event.target.localName === 'frame')) {
      known.delete(window);
      silent.delete(window);
      voided.delete(window);
    }
  };
  document.addEventListener('load', frameLoaded, true);

  const received = (event) => {
    // Only our parent's questions and our children's answers are of interest; checking the
    // source first keeps the cost off the page's own messages.
    const fromParent = event.source === parent && parent !== window;
    if (!fromParent && !listening) return;
    const data = event.data;
    if (!data || typeof data !== 'object' || data.tag !== TAG) return;
    if (data.kind === 'who' && fromParent) {
      chrome.runtime.sendMessage({ to: 'frame-token' }).then((reply) => {
        if (typeof reply?.token === 'string') parent.postMessage({ tag: TAG, kind: 'token', token: reply.token }, '*');
      }, () => {});
    } else if (data.kind === 'here' && event.source && !fromParent) {
      // A child whose scripts came late (injected after it was found silent) is asked again,
      // and waited for; once per window, so a page cannot keep the snapshot waiting.
      if (!greeted.has(event.source) && !voided.has(event.source)) {
        greeted.add(event.source);
        silent.delete(event.source);
      }
    } else if (data.kind === 'token' && event.source && !fromParent) {
      const child = event.source;
      if (voided.has(child)) return;
      const token = typeof data.token === 'string' && data.token.length <= MAX_TOKEN ? data.token : '';
      const earlier = known.get(child);
      if (token && earlier === undefined) {
        known.set(child, token);
        silent.delete(child);
      } else if (earlier !== token) {
        // A second, different answer from one window (or an unusable one): none is believed
        // until its frame loads a document.
        known.delete(child);
        silent.add(child);
        voided.add(child);
      }
      for (const wake of waiters) wake();
    }
  };
  addEventListener('message', received);
  // The worker asks whether this frame's listeners still live (page-scripts.js).
  const alive = () => tw.answerAlive?.();
  document.addEventListener('tabwright:alive', alive, true);
  // Scripts that arrive in a frame its parent already found silent say so.
  if (parent !== window) parent.postMessage({ tag: TAG, kind: 'here' }, '*');
  tw.onRetire(() => {
    document.removeEventListener('load', frameLoaded, true);
    removeEventListener('message', received);
    document.removeEventListener('tabwright:alive', alive, true);
  });

  /** The token of each iframe in `frames` ('' when unknown), asking the windows not known yet
   * under `instance` (the worker's) and waiting up to `timeoutMs` for those not known to be
   * silent. */
  tw.frameTokens = async function frameTokens(frames, instance, timeoutMs = 300) {
    useWorker(instance);
    const windows = frames.map((el) => el.contentWindow);
    const unknown = windows.filter((w) => w && !known.has(w));
    if (unknown.length) {
      listening = true;
      for (const w of unknown) w.postMessage({ tag: TAG, kind: 'who' }, '*');
      // Windows that stayed silent before are asked again (an answer counts next time), but
      // not waited for.
      const awaited = unknown.filter((w) => !silent.has(w));
      const deadline = Date.now() + timeoutMs;
      let wake = null;
      const waiter = () => wake?.();
      waiters.add(waiter);
      try {
        while (awaited.some((w) => !known.has(w) && !silent.has(w)) && Date.now() < deadline) {
          await new Promise((resolve) => {
            wake = resolve;
            setTimeout(resolve, Math.max(0, deadline - Date.now()));
          });
        }
      } finally {
        waiters.delete(waiter);
      }
      for (const w of awaited) if (!known.has(w)) silent.add(w);
    }
    return windows.map((w) => (w && known.get(w)) || '');
  };
})();
