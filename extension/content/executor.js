// The hands inside the page: click, aim at, type into, drag and give files to elements found by
// their index (choosing from dropdowns is dropdowns.js's).
//
// Clicks replay the event sequence a person's click produces (pointer and mouse down/up, then
// click) so pages that listen for any of them react. Some pages ignore events that are not
// trusted (`isTrusted` is false for every event a script makes), so a click also watches the
// page for a short while and says whether anything happened; when nothing did, the worker
// repeats the click as real input at the point `point` reports: where a real click would reach
// the element (asked only then, since a hit test right after scrolling is costly).
//
// An element is scrolled to the middle of the view before it is used only when it is not
// wholly in view or is covered at its centre: the page does not jump under a visible button.
//
// Typing and choosing use the native setters of the element's prototype before dispatching
// `input` and `change`: React and similar libraries track the value through that setter and
// ignore a plain `.value =`.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const gone = (index) => ({ ok: false, code: 'element_gone', message: `element [${index}] is no longer on the page` });
  const unsuitable = (message) => ({ ok: false, code: 'unsuitable', message });
  const fold = (text) => String(text ?? '').replace(/\s+/g, ' ').trim();
  const round = (n) => Math.round(n * 10) / 10;

  // After a click, how long the page gets to show an effect: two frames (a framework renders
  // on the next one), then up to this long for slower reactions.
  const EFFECT_WAIT_MS = 120;
  // Input types that a person clicks rather than types into.
  const CLICKED_INPUTS = new Set(['checkbox', 'radio', 'submit', 'button', 'reset', 'image']);
  const FILE_FIELD = 'it is a file field, which opens the computer\'s file picker; give it a file the person attached with upload_file (with none attached, ask the person to attach one in the side panel)';
  // Longest value sent back after typing: enough to check the typed text, without carrying a
  // whole document across the channel.
  const MAX_VALUE = 10_000;

  /** Scrolls the element to the middle of the view before it is used, as a person would,
   * unless it is ready to use where it is: wholly inside the visible part of the frame and not
   * covered at its centre. A page that jumped on every click would move what the person is
   * watching, and the model's next look, for nothing. */
  function bringIntoView(el) {
    const r = el.getBoundingClientRect();
    const v = tw.visibleRegion();
    const whollyInView = r.width > 0 && r.height > 0
      && r.top >= v.top && r.left >= v.left && r.bottom <= v.bottom && r.right <= v.right;
    if (whollyInView && reaches(el, r.left + r.width / 2, r.top + r.height / 2)) return;
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  }

  function flatParent(node) {
    return node.assignedSlot ?? node.parentNode ?? node.host ?? null;
  }

  // --- Where a real click would land -------------------------------------------------------

  /** Whether a hit test at (x, y) lands on the element or inside it. The element's own tree
   * scope asks, so an element inside a shadow root is not mistaken for covered by its host. */
  function reaches(el, x, y) {
    const root = el.getRootNode();
    const tester = typeof root.elementFromPoint === 'function' ? root : document;
    const hit = tester.elementFromPoint(x, y);
    return hit !== null && tw.flatContains(el, hit);
  }

  /** The point a real click should aim at, in this frame's viewport: the centre of the part of
   * the element inside the viewport, or failing that the first uncovered centre of its four
   * quarters (a sticky header or a badge over the middle of a row), or of its line boxes (a
   * link that wraps), or of its first words (a link around blocks). */
  function aimAt(el) {
    const rect = el.getBoundingClientRect();
    const left = Math.max(rect.left, 0);
    const top = Math.max(rect.top, 0);
    const right = Math.min(rect.right, innerWidth);
    const bottom = Math.min(rect.bottom, innerHeight);
    const inView = right - left >= 1 && bottom - top >= 1;
    const box = inView ? { left, top, width: right - left, height: bottom - top }
      : { left: rect.left, top: rect.top, width: rect.width, height: rect.height };
    const at = (fx, fy) => ({ x: box.left + box.width * fx, y: box.top + box.height * fy });
    const centre = at(0.5, 0.5);
    const result = (p, covered) => ({
      x: round(p.x), y: round(p.y), width: round(rect.width), height: round(rect.height), ...(covered ? { covered: true } : {}),
    });
    if (!inView) return result(centre, true);
    for (const p of [centre, at(0.25, 0.25), at(0.75, 0.25), at(0.25, 0.75), at(0.75, 0.75)]) {
      if (reaches(el, p.x, p.y)) return result(p, false);
    }
    // A link that wraps over two lines: the middle of its box may be the paragraph's own words,
    // the middle of one of its lines is the link. A link around blocks: its words.
    for (const line of [...tw.lineBoxes(el), ...tw.wordBoxes(el)]) {
      const p = { x: (line.left + line.right) / 2, y: (line.top + line.bottom) / 2 };
      if (p.x >= 0 && p.y >= 0 && p.x < innerWidth && p.y < innerHeight && reaches(el, p.x, p.y)) return result(p, false);
    }
    return result(centre, true);
  }

  tw.point = function point(index, expect) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    if (!tw.factsUnchanged(el, expect)) return changed();
    bringIntoView(el);
    const rect = el.getBoundingClientRect();
    if (!tw.hasSize(rect)) return unsuitable('it takes no space on the page (hidden or empty); choose a visible element');
    return { ok: true, result: aimAt(el) };
  };

  // --- Did the click do anything? ----------------------------------------------------------

  const OBSERVED = { subtree: true, childList: true, attributes: true, characterData: true, attributeOldValue: true };

  // --- What a person would call a result -----------------------------------------------------
  //
  // A click's own consequences are not the page's answer to it: the hover and focus styling it
  // leaves (a focused ring, a highlighted option, `aria-activedescendant` on a combobox, a
  // ripple drawn under the press) change the DOM of nearly every component library, so a click
  // that did nothing else would otherwise count as working, and the real click that might have
  // worked would never follow. So changes of attributes that can be styling are judged by their
  // net change when the page has settled (a class added on press and taken off on release is no
  // change), and a net change that only adds or removes hover, focus, highlight or ripple classes
  // (or `data-focus`, `data-hover`, `data-active`, `data-pressed`…) is not an effect.

  /** Class words that name an interaction state rather than a result. */
  const STATE_WORD = /focus|hover|ripple|highlight/i;
  /** Attributes whose change is never a result: where keyboard focus is shown to be. */
  const NEVER_A_RESULT = new Set(['aria-activedescendant', 'tabindex']);

  /** A ripple a press draws (MUI's TouchRipple and its kind), or what is inside one. */
  function inRipple(node) {
    const el = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
    return !!el?.closest?.('[class*="ripple" i]');
  }

  /** Attributes judged by their net change: the ones hover, focus and press styling use. */
  const judgedLater = (name) => name === 'class' || name === 'style' || name.startsWith('data-');

  /** Whether the net change of attribute `name` from `old` to `now` is interaction styling. */
  function stylingOnly(target, name, old, now) {
    if (inRipple(target)) return true;
    if (name.startsWith('data-') && /focus|hover|active|press|highlight/i.test(name)) return true;
    if (name !== 'class' && !name.startsWith('data-')) return false;
    const before = new Set(String(old ?? '').split(/\s+/).filter(Boolean));
    const after = new Set(String(now ?? '').split(/\s+/).filter(Boolean));
    const changed = [...before].filter((w) => !after.has(w)).concat([...after].filter((w) => !before.has(w)));
    return changed.length > 0 && changed.every((w) => STATE_WORD.test(w));
  }

  /** Sorts mutation records: `note()` for those that are a result at once; attribute changes
   * that may be styling are kept (their first old value) in `pending`, judged by `netChange`. */
  function sortRecords(records, pending, note) {
    for (const record of records) {
      if (!byPage(record)) continue;
      if (record.type === 'attributes') {
        const name = record.attributeName ?? '';
        if (NEVER_A_RESULT.has(name)) continue;
        if (judgedLater(name)) {
          let olds = pending.get(record.target);
          if (!olds) pending.set(record.target, (olds = new Map()));
          if (!olds.has(name)) olds.set(name, record.oldValue);
          continue;
        }
        note();
        return;
      }
      if (record.type === 'childList' && [...record.addedNodes, ...record.removedNodes].every(inRipple)) continue;
      note();
      return;
    }
  }

  /** Whether an attribute kept in `pending` ends changed, beyond interaction styling. */
  function netChange(pending) {
    for (const [target, olds] of pending) {
      if (!target.isConnected) continue;
      for (const [name, old] of olds) {
        const now = target.getAttribute(name);
        if (now !== old && !stylingOnly(target, name, old, now)) return true;
      }
    }
    return false;
  }
  const PAGE_EVENTS = ['beforeunload', 'pagehide', 'submit', 'hashchange', 'popstate'];

  /** The document and the shadow roots where a click's effect may show: those around the
   * element, its own, and every root the last snapshot met (a subtree observer on the
   * document does not see inside shadow roots). */
  function treesAround(el) {
    /** @type {Set<Document | ShadowRoot>} */
    const roots = new Set([document]);
    for (let root = el.getRootNode(); root instanceof ShadowRoot; root = root.host.getRootNode()) roots.add(root);
    const own = tw.shadowRootOf(el);
    if (own) roots.add(own);
    for (const ref of tw.registry?.shadowRoots ?? []) {
      const root = ref.deref();
      if (root?.host?.isConnected) roots.add(root);
    }
    return roots;
  }

  /** Changes Tabwright makes itself (its highlight layer) are not the page reacting. */
  function byPage(record) {
    const host = tw.highlightHost;
    if (!host) return true;
    if (record.target === host) return false;
    if (record.type !== 'childList') return true;
    const nodes = [...record.addedNodes, ...record.removedNodes];
    return !nodes.every((node) => node === host);
  }

  /** What a click can change without touching the DOM: properties, focus, scroll, URL. */
  function stateAround(el) {
    const control = el instanceof HTMLLabelElement ? (el.control ?? el) : el;
    const openers = [];
    for (let n = el; n; n = flatParent(n)) {
      if (n instanceof HTMLDetailsElement || n instanceof HTMLDialogElement) openers.push(n);
    }
    return {
      control,
      url: location.href,
      active: tw.deepActive(),
      checked: control.checked,
      value: typeof control.value === 'string' ? control.value : undefined,
      scroll: [scrollX, scrollY],
      openers: openers.map((n) => [n, n.open]),
    };
  }

  function stateChanged(before, el) {
    const { control } = before;
    const active = tw.deepActive();
    // Focus landing on the clicked element or around it (a press focuses the nearest focusable
    // element), or leaving for nowhere, is the click's own doing, not an effect.
    const focusMoved = active !== before.active && active !== null && active !== document.body
      && !tw.flatContains(el, active) && !tw.flatContains(active, el);
    // A caret in a field a person can type into is what they see of a click on it, whether
    // it moved there or was there already (a person clicks into a field to type).
    const caret = takesTyping(active) && (active !== before.active || tw.flatContains(el, active));
    return location.href !== before.url
      || focusMoved
      || caret
      || control.checked !== before.checked
      || (before.value !== undefined && control.value !== before.value)
      || scrollX !== before.scroll[0] || scrollY !== before.scroll[1]
      || before.openers.some(([n, open]) => n.open !== open);
  }

  /** Whether `el` is a field a person types into (a caret shows when it has focus). */
  function takesTyping(el) {
    if (el instanceof HTMLInputElement) return !CLICKED_INPUTS.has(el.type) && !['file', 'range', 'color'].includes(el.type) && !el.readOnly;
    if (el instanceof HTMLTextAreaElement) return !el.readOnly;
    return el instanceof HTMLElement && el.isContentEditable;
  }

  /** An animation frame, or a short timeout when frames do not come (a hidden tab). */
  function nextFrame() {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 50);
      requestAnimationFrame(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Starts watching the page for any reaction to a click on `el`. */
  function watchEffects(el) {
    const before = stateAround(el);
    let seen = false;
    let wake = null;
    let announce;
    // Settles on the first effect: a click that starts a navigation must be answered before the
    // page unloads, or the reply is lost with it.
    const firstEffect = new Promise((resolve) => { announce = resolve; });
    // Whether the click started leaving the page (a link, a form submit, a script navigation):
    // the worker then waits for the next page; otherwise it need not wait for one.
    let leaving = false;
    const note = (event) => {
      if (event?.type === 'beforeunload' || event?.type === 'pagehide' || event?.type === 'submit') leaving = true;
      if (event?.type === 'navigate' && !event.hashChange) leaving = true;
      seen = true;
      announce();
      wake?.();
    };
    /** @type {Map<Element, Map<string, string | null>>} */
    const pending = new Map();
    const take = (records) => sortRecords(records, pending, note);
    const observer = new MutationObserver(take);
    for (const root of treesAround(el)) observer.observe(root, OBSERVED);
    for (const type of PAGE_EVENTS) addEventListener(type, note, true);
    const navigation = globalThis.navigation;
    navigation?.addEventListener?.('navigate', note);
    const stop = () => {
      take(observer.takeRecords());
      observer.disconnect();
      for (const type of PAGE_EVENTS) removeEventListener(type, note, true);
      navigation?.removeEventListener?.('navigate', note);
    };
    return {
      /** Whether the page started navigating away. */
      get leaving() {
        return leaving || location.href !== before.url;
      },
      /** Runs `fn` and disregards the DOM changes made meanwhile: the page reacting to focus
       * at once (a focused style, a menu closing on blur) rather than to the click. What the
       * page does about focus later (a render queued by a framework) is judged as styling or
       * not by `stylingOnly`. */
      ignoring(fn) {
        take(observer.takeRecords());
        try {
          fn();
        } finally {
          observer.takeRecords();
        }
      },
      /** Whether anything changed since watching began; stops watching. */
      check() {
        stop();
        return seen || netChange(pending) || stateChanged(before, el);
      },
      /** Waits for the page to react and tells whether it did. */
      async settle() {
        try {
          // A click handled at once has changed the page already: no frame need come first.
          if (!seen) take(observer.takeRecords());
          if (!seen) await Promise.race([firstEffect, nextFrame().then(nextFrame)]);
          const deadline = performance.now() + EFFECT_WAIT_MS;
          const answered = () => seen || netChange(pending) || stateChanged(before, el);
          while (!answered() && performance.now() < deadline) {
            take(observer.takeRecords());
            await new Promise((resolve) => {
              wake = resolve;
              setTimeout(resolve, Math.min(20, Math.max(0, deadline - performance.now())));
            });
          }
        } finally {
          stop();
        }
        return seen || netChange(pending) || stateChanged(before, el);
      },
    };
  }

  /** A person's click on `el` (pointer.js), aimed at the middle of its box. `watching` runs
   * once the pointer is there and the page has answered its arrival (a frame, when it entered
   * something new): what the hover changes is not the click's effect. `focusing` runs the
   * focus change, so a caller can tell its consequences apart.
   * @param {Element} el
   * @param {{ watching?: () => void, focusing?: (fn: () => void) => void }} [hooks] */
  async function clickAsPerson(el, { watching, focusing } = {}) {
    const [x, y] = tw.middleOf(el);
    return tw.personClick(el, x, y, {
      moved: async (entered) => {
        if (entered) await nextFrame();
        watching?.();
      },
      focusing,
    });
  }

  /** After a click that showed no effect, the page is watched on: a slow handler (one that
   * waits for the network first) may still react, and then a trusted retry would click twice. */
  const LATE_EFFECT_WATCH_MS = 10_000;

  /** The reply for a checked element the page changed since the check (act-facts.js). */
  function changed() {
    return { ok: false, code: 'changed', message: 'it changed after Tabwright checked it (its name, value, link or form is no longer what was checked); look at the page again before acting on it' };
  }

  tw.click = async function click(index, expect) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    if (!tw.factsUnchanged(el, expect)) return changed();
    if (el.matches(':disabled')) return unsuitable('it is disabled');
    if (el instanceof HTMLInputElement && el.type === 'file') {
      return unsuitable(FILE_FIELD);
    }
    tw.lateClick?.watch.check();
    tw.lateClick = null;
    bringIntoView(el);
    // A checked click sends no form but the one checked, as it was checked.
    const guard = typeof expect === 'string' ? tw.guardSubmissions(el, expect) : null;
    /** @type {ReturnType<typeof watchEffects> | null} */
    let watch = null;
    try {
      await clickAsPerson(el, {
        watching: () => { watch = watchEffects(el); },
        focusing: (fn) => (watch ? watch.ignoring(fn) : fn()),
      });
    } catch (error) {
      watch?.settle();
      guard?.end();
      throw error;
    }
    watch ??= watchEffects(el);
    const effect = await watch.settle();
    const stopped = guard?.end() ?? [];
    if (stopped.length) {
      return { ok: false, code: 'form_stopped', message: `the page tried to send another form than the one checked (to ${stopped[0].slice(0, 200)}) after the click; Tabwright stopped it. Act on that form's own button, so it can be checked` };
    }
    if (!effect) watchLate(index, el);
    return { ok: true, result: { effect, navigating: watch.leaving } };
  };

  /** Keeps watching `el` after a click on `index` that showed no effect (lateClickEffect). */
  function watchLate(index, el) {
    const late = { index, watch: watchEffects(el) };
    tw.lateClick = late;
    setTimeout(() => {
      if (tw.lateClick === late) late.watch.check();
    }, LATE_EFFECT_WATCH_MS);
  }

  /** Whether the page reacted late to the last click on `index` that showed no effect at
   * first. Asked just before a trusted retry. */
  tw.lateClickEffect = function lateClickEffect(index, again = false) {
    const late = tw.lateClick;
    tw.lateClick = null;
    // Checked whatever element it watched: checking is what stops the watch.
    const seen = late ? late.watch.check() : false;
    const effect = !!late && late.index === index && seen;
    // Asked before a real click on it: what that click does is watched from now on.
    if (again) {
      const el = tw.elementAt(index);
      if (el) watchLate(index, el);
    }
    return { ok: true, result: { effect } };
  };

  // --- Typing ------------------------------------------------------------------------------

  function setNativeValue(el, value) {
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
    if (setter) setter.call(el, value);
    else el.value = value;
  }

  /** The reply after typing: the field's value, except where it is a secret. */
  function typed(el, value) {
    if (tw.isSecretField(el)) return { ok: true, result: {} };
    return { ok: true, result: { value: value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…` : value } };
  }

  tw.input = function input(index, text, clear) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    if (el instanceof HTMLSelectElement) {
      return unsuitable('it is a dropdown (<select>), which does not take typed text; use select_dropdown with the text of the option (dropdown_options lists them)');
    }
    if (el instanceof HTMLInputElement) {
      if (el.type === 'file') return unsuitable(FILE_FIELD);
      if (CLICKED_INPUTS.has(el.type)) return unsuitable(`a ${el.type} input does not take text; click it instead`);
    }
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      if (el.matches(':disabled') || el.readOnly) return unsuitable('it is disabled or read-only');
      bringIntoView(el);
      el.focus({ preventScroll: true });
      const wanted = clear ? text : el.value + text;
      setNativeValue(el, wanted);
      el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      // Date, number and similar fields silently drop text they cannot parse.
      if (el.value !== wanted && el.value === '' && wanted !== '') {
        return unsuitable(`the field refused ${JSON.stringify(text)}; a ${el.type} field needs its own format (for a date: YYYY-MM-DD)`);
      }
      return typed(el, el.value);
    }
    if (el.isContentEditable) {
      bringIntoView(el);
      el.focus({ preventScroll: true });
      const selection = getSelection();
      selection.selectAllChildren(el);
      if (!clear) selection.collapseToEnd();
      document.execCommand('insertText', false, text);
      return typed(el, el.innerText);
    }
    return unsuitable(`a <${el.localName}> does not take text; choose an input, text area or editable element`);
  };

  // --- Dragging ----------------------------------------------------------------------------

  // A drag moves in this many steps, a frame apart: libraries that wait for the pointer to
  // travel a few pixels before a drag starts (dnd-kit's activation distance) see it travel,
  // and those that react on the next tick (SortableJS) have had it.
  const DRAG_STEPS = 12;

  /** Drags element `index` to element `toIndex` or to the point `toPoint`, as a person's mouse
   * would: press on it, move in steps, let go. Pointer and mouse events all the way (pointer-
   * driven libraries such as dnd-kit follow those), and when the element (or one it is in) is
   * draggable once pressed, the HTML5 drag events with one dataTransfer (SortableJS, native
   * drop areas). The reply says whether the page changed. */
  tw.drag = async function drag(index, toIndex, toPoint) {
    const source = tw.elementAt(index);
    if (!source) return gone(index);
    const target = toIndex === null ? null : tw.elementAt(toIndex);
    if (toIndex !== null && !target) return gone(toIndex);
    if (!target && !(toPoint && toPoint.every(Number.isFinite))) return unsuitable('say where to drop it: an element or a point');
    bringIntoView(source);
    const from = tw.middleOf(source);
    const to = target ? tw.middleOf(target) : toPoint;
    const watch = watchEffects(source);
    const under = ([x, y], fallback) => document.elementFromPoint(x, y) ?? fallback;
    const base = { bubbles: true, cancelable: true, composed: true, view: window, button: 0 };
    const at = ([x, y], buttons) => ({ ...base, clientX: x, clientY: y, screenX: x, screenY: y, buttons });
    const pointer = (type, el, point, buttons) => {
      el.dispatchEvent(new PointerEvent(type, { ...at(point, buttons), pointerId: 1, pointerType: 'mouse', isPrimary: true }));
    };
    const mouse = (type, el, point, buttons) => el.dispatchEvent(new MouseEvent(type, at(point, buttons)));
    const transfer = new DataTransfer();
    const dragEvent = (type, el, point) => {
      const event = new DragEvent(type, { ...at(point, 1), dataTransfer: transfer });
      el.dispatchEvent(event);
      return event;
    };

    pointer('pointerdown', source, from, 1);
    mouse('mousedown', source, from, 1);
    await nextFrame();
    // Draggable now (SortableJS makes the pressed item draggable on pointerdown).
    const draggable = source.closest('[draggable=true]');
    let dragging = false;
    if (draggable) {
      dragging = !dragEvent('dragstart', draggable, from).defaultPrevented;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    let over = source;
    for (let step = 1; step <= DRAG_STEPS; step++) {
      const f = step / DRAG_STEPS;
      const point = /** @type {[number, number]} */ ([from[0] + (to[0] - from[0]) * f, from[1] + (to[1] - from[1]) * f]);
      const el = under(point, target ?? source);
      pointer('pointermove', el, point, 1);
      mouse('mousemove', el, point, 1);
      if (dragging) {
        if (el !== over) {
          dragEvent('dragleave', over, point);
          dragEvent('dragenter', el, point);
        }
        dragEvent('dragover', el, point);
      }
      over = el;
      await nextFrame();
    }
    const end = under(to, target ?? source);
    if (dragging) {
      dragEvent('drop', end, to);
      dragEvent('dragend', draggable, to);
    }
    pointer('pointerup', end, to, 0);
    mouse('mouseup', end, to, 0);
    const effect = await watch.settle();
    return { ok: true, result: { effect, html5: dragging } };
  };

  // --- Files -------------------------------------------------------------------------------

  /** The file field a file for `el` goes into: the element itself, the field a label is for,
   * one inside it (a drop zone that holds its hidden field, as react-dropzone does), or, for a
   * button, the one field beside it in the same small container (a "Choose file" button next
   * to the hidden field it opens). Anything else is dropped on. */
  function fileFieldOf(el) {
    const isField = (n) => n instanceof HTMLInputElement && n.type === 'file';
    if (isField(el)) return el;
    if (el instanceof HTMLLabelElement && isField(el.control)) return el.control;
    const inside = el.querySelectorAll('input[type=file]');
    if (inside.length === 1) return inside[0];
    const isButton = el.localName === 'button' || el.getAttribute('role') === 'button';
    const box = el.parentElement;
    if (isButton && inside.length === 0 && box && box !== document.body && box.children.length <= 4) {
      const beside = box.querySelectorAll(':scope > input[type=file]');
      if (beside.length === 1) return beside[0];
    }
    return null;
  }

  /** Gives element `index` a file (`data`: its bytes as base64), as a person would: picked in
   * its file field (a file input cannot be set from a script but through a DataTransfer's
   * list, and the page hears `input` and `change`), or dragged from the desktop and dropped
   * on it (dragenter, dragover, drop, with the file in the event's dataTransfer). The reply
   * says which, and whether the page took it: the field kept the file, or the page handled
   * the drop (a drop area cancels dragover or drop; nothing else does). */
  tw.upload = function upload(index, name, mime, data) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    let bytes;
    try {
      bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    } catch {
      return unsuitable('the file could not be read');
    }
    const file = new File([bytes], name, { type: mime });
    const transfer = new DataTransfer();
    transfer.items.add(file);
    const field = fileFieldOf(el);
    if (field) {
      if (field.matches(':disabled')) return unsuitable('its file field is disabled');
      field.files = transfer.files;
      field.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      field.dispatchEvent(new Event('change', { bubbles: true }));
      return { ok: true, result: { target: 'input', accepted: [...(field.files ?? [])].some((f) => f.name === name) } };
    }
    bringIntoView(el);
    const r = el.getBoundingClientRect();
    const at = { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
    const drag = (type) => {
      const event = new DragEvent(type, { bubbles: true, cancelable: true, composed: true, dataTransfer: transfer, ...at });
      el.dispatchEvent(event);
      return event.defaultPrevented;
    };
    drag('dragenter');
    const over = drag('dragover');
    const dropped = drag('drop');
    return { ok: true, result: { target: 'drop', accepted: over || dropped } };
  };

  // What the other hands (dropdowns.js) do as these do.
  tw.hands = { gone, unsuitable, fold, bringIntoView, nextFrame, clickAsPerson, watchEffects, aimAt };
})();
