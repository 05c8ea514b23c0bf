// The hands on dropdowns: the options of a `<select>` or of a component library's custom select
// (a combo box, a listbox button, a box drawn in place of a hidden `<select>`), and choosing one
// as a person does: the control opened with a person's click (executor.js's, or a real one the
// worker makes when a script's shows no options), the options read where a person sees them,
// the option clicked the same way, and "chose" said only once the control shows the choice.
(() => {
  const tw = (globalThis.tabwright ??= {});
  const { gone, unsuitable, fold, bringIntoView, nextFrame, clickAsPerson, watchEffects, aimAt } = tw.hands;

  const NOT_A_DROPDOWN = 'it is not a dropdown (neither a <select> nor an ARIA listbox or combobox); click it and read the options from the page';

  /** Whether a person can see `el`: rendered, with a box. An accessibility listbox kept at
   * 0 × 0 beside the real list (Ant Design's) is not one. */
  function shown(el) {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && tw.isRendered(el);
  }

  /** Whether `el` opens a list of options when clicked: a combobox, or a control saying it has
   * a listbox or menu popup. */
  function opensList(el) {
    const popup = el.getAttribute('aria-haspopup');
    return el.getAttribute('role') === 'combobox' || (popup !== null && popup !== 'false' && popup !== 'dialog');
  }

  /** Whether a person would take `el` for a dropdown worth opening: one that says so in ARIA,
   * or a custom select that says nothing (a read-only field, or a box whose own class, or its
   * parent's, names a select, dropdown, combo box or picker). */
  function mayOpen(el) {
    if (opensList(el)) return true;
    if (el instanceof HTMLInputElement && el.readOnly) return true;
    const named = (n) => /select|dropdown|combo|picker|listbox/i.test(n?.getAttribute?.('class') ?? '');
    return named(el) || named(el.parentElement);
  }

  /** The ARIA listbox behind an element, when a person can see it: the element itself, the
   * one it sits in (an option's index was given), or the one it controls, owns or contains
   * (in its own tree scope, so a web component's list is found). Null when there is none. */
  function listboxOf(el) {
    const role = el.getAttribute('role');
    // A list whose own box is flat while its options show (Material Web's menu draws the items
    // outside a listbox of no height) is as visible as its options.
    const visible = (box) => (box && (shown(box) || optionsUnder(box, isAriaOption).length) ? box : null);
    if (role === 'listbox') return visible(el);
    if (role === 'option') return visible(el.closest('[role=listbox]'));
    // A box a person clicks that holds the combo box the page made invisible (Element Plus)
    // opens that combo box's list.
    const control = opensList(el) ? el : el.querySelector('[role=combobox]');
    if (!control) return null;
    const scope = control.getRootNode();
    const ids = `${control.getAttribute('aria-controls') ?? ''} ${control.getAttribute('aria-owns') ?? ''}`.split(/\s+/).filter(Boolean);
    for (const id of ids) {
      const target = scope.getElementById?.(id) ?? document.getElementById(id);
      if (!target) continue;
      const box = target.getAttribute('role') === 'listbox' ? target : target.querySelector('[role=listbox]');
      if (visible(box)) return box;
    }
    // A control may hold a list that only shows its current choice (Choices.js keeps the
    // chosen item in a listbox of its own, before the one to choose from): the list to choose
    // from is one that offers something else.
    const inside = [...el.querySelectorAll('[role=listbox]')].filter((box) => visible(box));
    return inside.find((box) => offersChoice(box)) ?? null;
  }

  /** Whether a list offers more than the choice already made: two options or more, or one
   * not selected. */
  function offersChoice(box) {
    const options = optionsUnder(box, isAriaOption);
    return options.length > 1 || (options.length === 1 && options[0].getAttribute('aria-selected') !== 'true');
  }

  /** The options inside `root` in the flat tree, as a person sees them: slotted options of a
   * web component (`<sl-option>` in `<sl-select>`) included, hidden ones left out. */
  function optionsUnder(root, isOption) {
    const found = [];
    const visit = (node, depth) => {
      if (depth > 40) return;
      for (const child of tw.renderedChildren(node)) {
        if (child.nodeType !== Node.ELEMENT_NODE) continue;
        if (isOption(child)) {
          if (shown(child)) found.push(child);
        } else {
          visit(child, depth + 1);
        }
      }
    };
    visit(root, 0);
    return found;
  }

  const isAriaOption = (el) => el.getAttribute('role') === 'option';

  /** Elements that look like the options of a list a click just opened, when the list says
   * nothing in ARIA (Ant Design's visible items): marked selected-or-not, or named option or
   * item by their class. */
  const looksLikeOption = (el) => isAriaOption(el) || el.hasAttribute('aria-selected')
    || /(^|[-_\s])(option|item)(?![a-z])/i.test(el.getAttribute('class') ?? '');

  /** Waits (at most `maxMs`) for the page's running transitions and animations that end
   * (indexer.js, settleAnimations). */
  async function animationsEnded(maxMs) {
    await tw.settleAnimations?.(maxMs);
  }

  // How long an opened list may take to show its options (a menu that grows in).
  const LIST_OPEN_MS = 600;

  /** Starts noting the elements the page adds (in the document and the shadow roots around
   * `el`): a list opened in a portal is among them. */
  function noteAdditions(el) {
    /** @type {Element[]} */
    const added = [];
    const keep = (records) => {
      for (const record of records) for (const node of record.addedNodes) if (node.nodeType === Node.ELEMENT_NODE) added.push(/** @type {Element} */ (node));
    };
    const observer = new MutationObserver(keep);
    observer.observe(document, { childList: true, subtree: true });
    for (let root = el.getRootNode(); root instanceof ShadowRoot; root = root.host.getRootNode()) {
      observer.observe(root, { childList: true, subtree: true });
    }
    return {
      el,
      added,
      take: () => keep(observer.takeRecords()),
      stop: () => observer.disconnect(),
    };
  }

  /** Waits (briefly) for the options of the list behind `el` to show, and for its opening
   * animation to end; returns what the page added meanwhile. */
  async function listShown(el, notes) {
    const deadline = performance.now() + LIST_OPEN_MS;
    while (performance.now() < deadline) {
      await nextFrame();
      notes.take();
      if (visibleOptions(el, notes.added).options.length) break;
    }
    await animationsEnded(LIST_OPEN_MS);
    notes.take();
    return notes.added;
  }

  /** Additions still being noted for a control whose list a real click of the worker's is to
   * open (`openedOptions` asked for it); taken by the next request about that control. */
  let awaitingRealOpen = null;

  /** Opens the list behind `el` with a person's click and waits (briefly) for its options to
   * show. Returns the elements the page added meanwhile. */
  async function openList(el) {
    const notes = noteAdditions(el);
    /** @type {ReturnType<typeof watchEffects> | null} */
    let watch = null;
    try {
      bringIntoView(el);
      await clickAsPerson(el, { watching: () => { watch = watchEffects(el); } });
      const added = await listShown(el, notes);
      return { added, changed: watch ? watch.check() : true };
    } finally {
      notes.stop();
    }
  }

  /** The options a person can see for `el`: its ARIA listbox's, else (after `opened`, what a
   * click added) those of the list it opened. */
  function visibleOptions(el, opened = []) {
    const listbox = listboxOf(el);
    if (listbox) {
      const options = optionsUnder(listbox, isAriaOption);
      if (options.length) return { listbox, options };
    }
    const roots = outermost(opened);
    for (const root of roots) {
      const aria = optionsUnder(root, isAriaOption);
      if (aria.length) return { listbox: root, options: aria };
    }
    for (const root of roots) {
      const like = optionsUnder(root, looksLikeOption).filter((o) => fold(o.textContent));
      if (like.length) return { listbox: root, options: like };
    }
    return { listbox, options: [] };
  }

  // The most added elements looked through for a list: an app that draws a whole page at
  // once is not searched element by element every frame.
  const MAX_ADDED_ROOTS = 50;

  /** The elements of `added` still on the page that are not inside another of them, each
   * once, the first MAX_ADDED_ROOTS. */
  function outermost(added) {
    const kept = new Set(added.filter((n) => n.isConnected));
    const roots = [...kept].filter((n) => {
      for (let up = n.parentElement; up; up = up.parentElement) if (kept.has(up)) return false;
      return true;
    });
    return roots.slice(0, MAX_ADDED_ROOTS);
  }

  /** The words of `el` as a person reads them: in the flat tree, so an option that shows its
   * words through a slot (a web component's item with its text in the light DOM) has them. */
  function flatText(el) {
    if (!el.shadowRoot && !el.querySelector('slot')) return el.textContent ?? '';
    let words = '';
    const visit = (node, depth) => {
      if (depth > 30 || words.length > 1000) return;
      if (node.nodeType === Node.TEXT_NODE) {
        words += ` ${node.textContent}`;
        return;
      }
      if (node.nodeName === 'STYLE' || node.nodeName === 'SCRIPT') return;
      for (const child of tw.renderedChildren(node)) visit(child, depth + 1);
    };
    visit(el, 0);
    return words;
  }

  /** A group's name: its label, or the text of the element its aria-labelledby names. */
  function groupName(group) {
    const label = group.getAttribute('aria-label');
    if (label) return fold(label);
    const by = group.getAttribute('aria-labelledby');
    const named = by && group.getRootNode().getElementById?.(by.split(/\s+/)[0]);
    return named ? fold(named.textContent) : '';
  }

  function optionEntries(listbox, options) {
    return options.map((option, index) => {
      const text = fold(option.getAttribute('label') || flatText(option));
      const entry = {
        index,
        text,
        value: option.dataset?.value ?? option.getAttribute('value') ?? text,
        selected: option.getAttribute('aria-selected') === 'true',
        disabled: option.getAttribute('aria-disabled') === 'true' || option.hasAttribute('disabled'),
      };
      const group = option.parentElement?.closest('[role=group]');
      const name = group && listbox.contains(group) ? groupName(group) : '';
      if (name) entry.group = name;
      return { entry, option };
    });
  }

  /** Whether the control now shows `text` as its choice: in its value, its own text or that of
   * the small box around it (where libraries show the chosen option), or the option says it is
   * selected. */
  function showsChoice(el, option, text) {
    if (option?.getAttribute('aria-selected') === 'true' && option.isConnected) return true;
    const wanted = text.toLowerCase();
    const says = (node) => node && typeof node.value === 'string' && node.value.toLowerCase().includes(wanted);
    if (says(el)) return true;
    let node = el;
    for (let up = 0; node && up < 5; up++, node = node.parentElement ?? node.getRootNode().host ?? null) {
      if (says(node)) return true;
      const words = fold(node.textContent);
      if (words.length > 300) break;
      if (words.toLowerCase().includes(wanted) && !(option && (node.contains(option) || tw.flatContains(node, option)))) return true;
    }
    return false;
  }

  function selectOptions(select) {
    const secret = tw.isSecretField(select);
    return [...select.options].map((option, index) => {
      const entry = { index, text: fold(option.text), value: option.value, disabled: option.matches(':disabled') };
      // Which card expiry month is chosen is the person's secret; the list of months is not.
      if (!secret) entry.selected = option.selected;
      const group = option.parentElement instanceof HTMLOptGroupElement ? fold(option.parentElement.label) : '';
      if (group) entry.group = group;
      return { entry, option };
    });
  }

  /** The options a person sees for `el`, opening it first as a person would when it is closed:
   * a person's click, then (`then === 'opened'`) a real one made by the worker when the
   * script's showed none. Returns {found} or a reply: the real click asked for, or why not. */
  async function openedOptions(el, then) {
    let found = visibleOptions(el);
    if (found.options.length) return { found };
    const waiting = awaitingRealOpen;
    awaitingRealOpen = null;
    waiting?.stop();
    if (then === 'opened') {
      // The worker's real click opened it: its list shows within a moment, among what the page
      // added since the script's click was tried.
      const notes = waiting?.el === el ? waiting : noteAdditions(el);
      try {
        found = visibleOptions(el, await listShown(el, notes));
      } finally {
        notes.stop();
      }
      if (found.options.length) return { found };
      return { reply: unsuitable('no options showed when it was opened, even with a real click; click it, then read or click the options on the page') };
    }
    if (!mayOpen(el)) return { reply: unsuitable(NOT_A_DROPDOWN) };
    const { added, changed } = await openList(el);
    found = visibleOptions(el, added);
    if (found.options.length) return { found };
    // The script's click did something, though no options a person would see showed: a real
    // click now could close what it opened.
    if (changed || el.getAttribute('aria-expanded') === 'true') {
      return { reply: unsuitable('no options showed when it was opened; click it, and read or click the options on the page') };
    }
    // A script's click showed nothing: a person's real click is asked of the worker, and what
    // the page adds is noted from now on.
    awaitingRealOpen = noteAdditions(el);
    setTimeout(() => {
      if (awaitingRealOpen?.el === el) {
        awaitingRealOpen.stop();
        awaitingRealOpen = null;
      }
    }, 20_000);
    return { reply: { ok: true, result: { real_click: 'open' } } };
  }

  tw.dropdownOptions = async function dropdownOptions(index) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    if (el instanceof HTMLSelectElement) {
      return { ok: true, result: { kind: 'select', multiple: el.multiple, options: selectOptions(el).map(({ entry }) => entry) } };
    }
    const wasOpen = visibleOptions(el).options.length > 0;
    const { found, reply } = await openedOptions(el, undefined);
    if (reply?.result?.real_click) {
      // Listing makes no real click (the worker refuses it): nothing is to be noted for one.
      awaitingRealOpen?.stop();
      awaitingRealOpen = null;
    }
    if (reply) return reply;
    return {
      ok: true,
      result: {
        kind: 'aria',
        opened: !wasOpen,
        multiple: found.listbox?.getAttribute?.('aria-multiselectable') === 'true',
        options: optionEntries(found.listbox, found.options).map(({ entry }) => entry),
      },
    };
  };

  /** The option a text names: exact text, then exact value, then the same text ignoring case
   * and spacing, then the only option whose text contains it. Returns {found} or {why}. */
  function pick(choices, text) {
    const wanted = fold(text).toLowerCase();
    const found = choices.find((c) => c.entry.text === text)
      ?? choices.find((c) => c.entry.value === text)
      ?? choices.find((c) => c.entry.text.toLowerCase() === wanted);
    if (found) return { found };
    const containing = wanted ? choices.filter((c) => c.entry.text.toLowerCase().includes(wanted)) : [];
    if (containing.length === 1) return { found: containing[0] };
    const listed = (containing.length ? containing : choices).slice(0, 20).map((c) => JSON.stringify(c.entry.text));
    const more = (containing.length || choices.length) > 20 ? ', …' : '';
    const why = containing.length
      ? `${containing.length} options contain ${JSON.stringify(text)}: ${listed.join(', ')}${more}; give the exact text of one`
      : `no option matches ${JSON.stringify(text)}; the options are: ${listed.join(', ')}${more}`;
    return { why: choices.length ? why : 'it has no options' };
  }

  function chooseInSelect(select, text) {
    if (select.matches(':disabled')) return unsuitable('the dropdown is disabled');
    const { found, why } = pick(selectOptions(select), text);
    if (!found) return unsuitable(why);
    const { entry, option } = found;
    if (entry.disabled) return unsuitable(`the option ${JSON.stringify(entry.text)} is disabled`);
    bringIntoView(select);
    select.focus({ preventScroll: true });
    if (select.multiple) {
      const setter = Object.getOwnPropertyDescriptor(HTMLOptionElement.prototype, 'selected').set;
      setter.call(option, true);
    } else {
      Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set.call(select, option.value);
      // Two options can share a value; the one named is the one wanted.
      if (select.selectedIndex !== option.index) {
        Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'selectedIndex').set.call(select, option.index);
      }
    }
    select.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    select.dispatchEvent(new Event('change', { bubbles: true }));
    // Which card expiry month was chosen is the person's secret.
    const result = tw.isSecretField(select) ? {} : { selected: entry.text, value: option.value };
    return { ok: true, result };
  }

  /** Waits a few frames for the control `el` to show `text` as its choice. */
  async function choiceShown(el, option, text) {
    for (let waited = 0; waited < 8 && !showsChoice(el, option, text); waited++) await nextFrame();
    return showsChoice(el, option, text);
  }

  /** The reply once the control shows the choice: the closing list is let finish first. */
  async function chose(text, value) {
    // The list closes on the next frame, often with an animation (MUI's menu, Shoelace's
    // popup): the next look waits for it, so the form is not shown still covered.
    await nextFrame();
    await animationsEnded(LIST_OPEN_MS);
    return { ok: true, result: { selected: text, value } };
  }

  tw.selectOption = async function selectOption(index, text, then) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    if (el instanceof HTMLSelectElement) return chooseInSelect(el, text);
    if (then === 'chose') {
      // The worker clicked the option for real (`text` is the option's own).
      if (await choiceShown(el, null, text)) return chose(text, undefined);
      return unsuitable(`the option ${JSON.stringify(text)} was clicked, even with a real click, but the control does not show it as chosen; look at the page, and click the option itself if it is still open`);
    }
    const { found, reply } = await openedOptions(el, then);
    if (reply) return reply;
    const { found: chosen, why } = pick(optionEntries(found.listbox, found.options), text);
    if (!chosen) return unsuitable(why);
    const { entry, option } = chosen;
    if (entry.disabled) return unsuitable(`the option ${JSON.stringify(entry.text)} is disabled`);
    bringIntoView(option);
    /** @type {ReturnType<typeof watchEffects> | null} */
    let watch = null;
    await clickAsPerson(option, { watching: () => { watch = watchEffects(option); } });
    const changed = watch ? await watch.settle() : true;
    if (await choiceShown(el, option, entry.text)) return chose(entry.text, entry.value);
    // The option took no script's click (nothing at all changed: a real click cannot undo a
    // choice the script's made): a person's real click on it is asked of the worker, where it
    // is now, uncovered (the list still open).
    if (!changed && option.isConnected && shown(option)) {
      bringIntoView(option);
      const aim = aimAt(option);
      if (aim.covered) return unsuitable(`the option ${JSON.stringify(entry.text)} took no script's click, and something covers it; look at the page, and click the option itself`);
      return { ok: true, result: { real_click: 'option', x: aim.x, y: aim.y, text: entry.text } };
    }
    return unsuitable(`the option ${JSON.stringify(entry.text)} was clicked, but the control does not show it as chosen; look at the page, and click the option itself if it is still open`);
  };
})();
