// What the model is told about an element: a short list of useful attributes, the name a
// label gives it, and the visible text that belongs to it. Secrets never leave the page: the
// values of password fields and of payment-card fields (autocomplete=cc-*) are not read at all.
//
// A control's label often lies elsewhere in the page (`<label for>`, `aria-labelledby` naming
// another element): three combo boxes of one form would all read `<input role=combobox>`.
// So the name those give it is sent as `label` (the element's own `aria-label` and `title`
// are sent as themselves; the core shows each name once).
//
// What a person sees that no attribute says:
//   - a control drawn only as an icon is named by its picture (`iconName`, sent as `icon`,
//     shown by the core only when the control has no other name): the symbol an SVG `<use>`s
//     (`#icon-trash` → trash), Font Awesome's `data-icon` on the SVGs it draws, an icon set's
//     class (`fa-trash`, `fa-solid fa-star`, `icon-star`, `glyphicon-star`, `bi-star`,
//     `mdi-star`, `ui-icon-trash`…), an image's file name when it has no alt
//     (`/img/trash-can.png` → trash can). An `<svg>`'s `<title>` and `aria-label`, and a
//     ligature icon font's text (`material-icons`), are words already.
//   - a read-only field is sent as `readonly`: a person clicks it (it opens a calendar, a
//     list), and typing into it does nothing;
//   - a combo box shows its value where its library draws it (`shownValue`): react-select
//     and Ant Design put the chosen option in an element beside the input, whose own value is
//     empty; that text is sent as the input's `value`.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const MAX_VALUE = 200;
  const MAX_TEXT = 2 * MAX_VALUE;
  // Pieces of text at least this long are not repeated within one element's text.
  const MIN_REPEAT = 4;
  // Attributes that help a model tell elements apart and use them.
  const USEFUL_ATTRIBUTES = [
    'type', 'name', 'role', 'aria-label', 'placeholder', 'title', 'alt', 'href', 'aria-expanded',
    'aria-haspopup', 'aria-checked', 'autocomplete', 'contenteditable',
  ];

  tw.isSecretField = function isSecretField(el) {
    const autocomplete = (el.getAttribute('autocomplete') || '').toLowerCase();
    // The attribute is a token list ("billing cc-number", "section-pay cc-csc").
    return (el.localName === 'input' && el.type === 'password') || autocomplete.split(/\s+/).some((t) => t.startsWith('cc-'));
  };

  /** Keeps the start of long values; the core shortens further for the prompt. */
  function clip(value) {
    return value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…` : value;
  }

  const LABELABLE = new Set(['input', 'select', 'textarea', 'button', 'meter', 'output', 'progress']);
  const fold = (text) => String(text ?? '').replace(/[\s\u200b\u200c\u200d\u2060\ufeff]+/g, ' ').trim();

  /** The text an element names another by: its text, or the label of the control it holds. */
  function namingText(el) {
    return fold(el.getAttribute('aria-label') || el.innerText || el.textContent);
  }

  /** The name a label elsewhere gives `el`: the elements `aria-labelledby` names (in its tree
   * scope), else, unless its own `aria-label` names it (which comes first in the accessible name
   * computation: a search box's label often wraps its suggestions too), its `<label>`s (`for`,
   * or wrapped around it) without the text of the control itself. Empty when none. */
  tw.labelOf = function labelOf(el) {
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const scope = el.getRootNode();
      const parts = by.split(/\s+/).filter(Boolean).map((id) => {
        const named = scope.getElementById?.(id) ?? document.getElementById(id);
        // An element naming itself (MUI's select), or by a part of itself (Select2 names its
        // box by the value shown inside it), adds its own text, not a label.
        return named && named !== el && !el.contains(named) ? namingText(named) : '';
      });
      const name = fold(parts.join(' '));
      if (name) return name;
    }
    if (fold(el.getAttribute('aria-label'))) return '';
    if (LABELABLE.has(el.localName)) return el.labels?.length ? labelsText([...el.labels]) : '';
    // A `<label for>` aimed at an element HTML does not label (jQuery UI points the page's
    // label at its own `<span role=combobox>`): a person still reads it as that control's.
    const aimed = el.id ? labelsFor(el.getRootNode()).get(el.id) : undefined;
    if (aimed) return labelsText(aimed);
    // A custom control drawn in place of a native one the page labelled and the library hid
    // (Select2 and Choices.js hide the `<select>` and show their own box): the label is its.
    if (isCustomControl(el)) {
      const replaced = replacedControl(el);
      if (replaced) return labelsText([...replaced.labels]);
    }
    return '';
  };

  /** The words of `labels` without those of the controls inside them (a value, options). */
  function labelsText(labels) {
    const names = labels.map((label) => {
      const copy = label.cloneNode(true);
      for (const inner of copy.querySelectorAll('input, select, textarea, button')) inner.remove();
      return fold(copy.textContent);
    });
    return fold(names.join(' '));
  }

  // The `<label for>`s of a tree scope by the id they name, read once per snapshot.
  let labelsForSnapshot = -1;
  /** @type {WeakMap<Node, Map<string, HTMLLabelElement[]>>} */
  let labelsByScope = new WeakMap();

  /** The `<label for=…>`s of `scope` (a document or shadow root), by the id they name. */
  function labelsFor(scope) {
    // Kept only while a snapshot reads the page (tw.readingPage): a label added since would
    // otherwise be missed by a question asked between snapshots (act-facts.js).
    if (!tw.readingPage) return readLabelsFor(scope);
    if (labelsForSnapshot !== tw.snapshotCount) {
      labelsForSnapshot = tw.snapshotCount;
      labelsByScope = new WeakMap();
    }
    let byId = labelsByScope.get(scope);
    if (!byId) {
      byId = readLabelsFor(scope);
      labelsByScope.set(scope, byId);
    }
    return byId;
  }

  /** The `<label for=…>`s of `scope` by the id they name, read now. */
  function readLabelsFor(scope) {
    /** @type {Map<string, HTMLLabelElement[]>} */
    const byId = new Map();
    for (const label of /** @type {ParentNode} */ (scope).querySelectorAll?.('label[for]') ?? []) {
      const id = label.getAttribute('for');
      if (id) byId.set(id, [...(byId.get(id) ?? []), /** @type {HTMLLabelElement} */ (label)]);
    }
    return byId;
  }

  /** Whether `el` is a select a library drew (not a native one): a combo box or list box
   * role, or one that says it opens a list. */
  function isCustomControl(el) {
    if (LABELABLE.has(el.localName)) return false;
    const role = el.getAttribute('role') ?? '';
    const popup = el.getAttribute('aria-haspopup');
    return role === 'combobox' || role === 'listbox' || popup === 'listbox' || popup === 'true';
  }

  /** The labelled `<select>` a library hid and drew `el` in place of: one inside `el`
   * (Choices.js keeps the `<select>` in its box), or one just before `el` or before a box
   * around it (Select2 puts its box right after the `<select>`), a few levels up at most. */
  function replacedControl(el) {
    /** @param {Element | null} n @returns {n is HTMLSelectElement} */
    const hiddenLabelled = (n) => n instanceof HTMLSelectElement && (n.labels?.length ?? 0) > 0 && !seenByPerson(n);
    const inside = el.querySelector('select');
    if (hiddenLabelled(inside)) return inside;
    let box = el;
    for (let up = 0; box && box !== document.body && up < 4; up++, box = box.parentElement) {
      let before = box.previousElementSibling;
      for (let k = 0; before && k < 2; k++, before = before.previousElementSibling) {
        if (hiddenLabelled(before)) return before;
      }
    }
    return null;
  }

  // --- Icons ---------------------------------------------------------------------------------

  // An icon set's class: the set's prefix (longest first), then the icon's name: `fa-trash`,
  // `bi-star`, `icon-tabler-trash`… Looked for in the whole class attribute at once.
  const ICON_CLASS = new RegExp(`(?:^|\\s)(?:${[
    'icon-tabler', 'glyphicon', 'dashicons', 'octicon', 'codicon', 'icofont', 'anticon', 'tabler-icon',
    'ui-icon', 'el-icon', 'ion-md', 'ion-ios', 'feather', 'lucide', 'iconoir', 'icons', 'icon', 'ion', 'mdi', 'lni', 'bxs',
    'bxl', 'bx', 'ico', 'uil', 'fa[srlbdt]?', 'la[srb]?', 'bi', 'ti', 'ri', 'oi', 'ph', 'gg',
  ].join('|')})-([a-z][a-z0-9_-]*)(?=\\s|$)`, 'gi');
  // Words in icon classes that say how an icon is drawn (Font Awesome's style, size and
  // animation classes share its prefix), not what it shows, nor an icon at all.
  const ICON_STYLE = /^(?:solid|regular|light|thin|duotone|brands|sharp|classic|fw|xs|sm|lg|xl|2xs|2xl|\d+x|\d+px|spin|spin-pulse|spin-reverse|pulse|beat|beat-fade|fade|bounce|flip|shake|border|inverse|stack|stack-\dx|li|ul|pull-(?:left|right|start|end)|rotate-[\w-]+|flip-[\w-]+|swap-opacity|layers(?:-[\w-]+)?|width-[\w-]+|dark|light|inactive|white|large|small|button|btn|link|wrapper|wrap|container|holder|box|only|left|right|text|label|size-[\w-]+)$/i;
  // Endings that say the icon's style: `star-o`, `star-fill`, `trash-line`.
  const STYLE_ENDING = /-(?:o|fill|filled|line|outline|outlined|alt|solid|regular|round|rounded|sharp|two-tone)$/i;
  // Words of a file or symbol name that name no picture.
  const NAME_NOISE = /^(?:icons?|ico|ic|img|image|images|btn|button|sprites?|svg|symbol|glyph|assets?|static|\d+(?:px|x)?|\d*x\d+|@?\dx|[0-9a-f]{6,})$/i;

  /** Words of a file or symbol name (`trash-can`, `ic_delete_24px`, `iconTrash`): dashes,
   * underscores and case changes apart, noise out; empty when none is a word of three letters. */
  function nameWords(name) {
    const words = name.replace(STYLE_ENDING, '').replace(/([a-z])([A-Z])/g, '$1 $2').split(/[\s\-_.]+/)
      .filter((w) => w && !NAME_NOISE.test(w));
    if (!words.some((w) => /^\p{L}{3,}$/u.test(w)) || words.length > 4) return '';
    return words.join(' ').toLowerCase();
  }

  /** The icon an icon set's class names, or ''. */
  function iconFromClasses(el) {
    const classes = el.getAttribute('class');
    if (!classes || !classes.includes('-')) return '';
    for (const [, name] of classes.matchAll(ICON_CLASS)) {
      if (ICON_STYLE.test(name)) continue;
      const words = name.replace(STYLE_ENDING, '').replace(/[-_]+/g, ' ').trim().toLowerCase();
      if (words) return words;
    }
    return '';
  }

  /** The name of the picture an image file shows, from its file name (shared with indexer.js,
   * for a control drawn with a background picture). */
  tw.iconFromFile = iconFromFile;
  function iconFromFile(src) {
    if (!src || /^data:/i.test(src)) return '';
    const file = src.split(/[?#]/)[0].split('/').pop() ?? '';
    let base = file.replace(/\.[a-z0-9]{2,5}$/i, '');
    try {
      base = decodeURIComponent(base);
    } catch {
      // a file name that is not URI-encoded text
    }
    return nameWords(base);
  }

  /** What an icon shows, in words, from what draws it (see the top of the file); '' when it is
   * not an icon or says it some other way. */
  tw.iconName = function iconName(el) {
    const tag = el.localName;
    if (tag === 'img') return el.getAttribute('alt') ? '' : iconFromFile(el.getAttribute('src') ?? '');
    if (tag === 'svg') {
      const drawn = el.getAttribute('data-icon');
      if (drawn) return drawn.replace(/[-_]+/g, ' ');
      const use = el.querySelector('use');
      const ref = use?.getAttribute('href') || use?.getAttribute('xlink:href') || '';
      const symbol = ref.includes('#') ? ref.slice(ref.indexOf('#') + 1) : '';
      if (symbol) {
        const titled = ref.startsWith('#') ? fold(el.getRootNode().getElementById?.(symbol)?.querySelector('title')?.textContent) : '';
        const named = titled || nameWords(symbol.replace(/^(?:icons?|ic|i|svg|sprite|glyph)[-_]/i, ''));
        if (named) return named;
      }
    }
    return iconFromClasses(el);
  };

  // --- Attributes ----------------------------------------------------------------------------

  // Fields a person could type into, were they not read-only.
  const TEXT_FIELDS = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number', 'date', 'datetime-local', 'month', 'week', 'time']);

  /** Whether a field takes no typing: `readonly`, or `aria-readonly` on a custom one. */
  function isReadOnly(el, tag) {
    if (tag === 'textarea' || (tag === 'input' && TEXT_FIELDS.has(el.type))) return el.readOnly;
    return el.getAttribute('aria-readonly') === 'true';
  }

  // A combo box's shown value is looked for this many containers up from it, and is at most
  // this long.
  const SHOWN_VALUE_LEVELS = 4;
  const MAX_SHOWN_VALUE = 80;
  const OTHER_CONTROLS = 'input, select, textarea, button, label, [role=combobox], [role=listbox]';

  /** Whether `el` is a combo box: its role, or the marks of one (a list it fills, a popup). */
  function isComboBox(el) {
    const role = el.getAttribute('role');
    return role === 'combobox' || el.hasAttribute('aria-autocomplete') || el.hasAttribute('list')
      || ['listbox', 'true', 'menu'].includes(el.getAttribute('aria-haspopup') ?? '');
  }

  /** The words `container` shows a person besides the control `el` and what names it: its
   * text, without the control, labels, placeholders (an element whose class says so), keyboard
   * hints, announcements for screen readers (live regions, and text in a box of a pixel or
   * less) and hidden text. */
  function shownText(container, el, skip) {
    const parts = [];
    const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
    for (let node = /** @type {Text | null} */ (walker.nextNode()); node; node = /** @type {Text | null} */ (walker.nextNode())) {
      const parent = node.parentElement;
      if (!parent || !/\S/.test(node.data)) continue;
      if (el.contains(node) || skip.some((s) => s.contains(node))) continue;
      const hidden = parent.closest('label, kbd, [aria-live], [role=status], [role=log], [aria-hidden=true], [class*=placeholder i]');
      if (hidden && container.contains(hidden)) continue;
      const box = parent.getBoundingClientRect();
      if (box.width <= 1 || box.height <= 1 || !tw.isRendered(parent)) continue;
      parts.push(node.data);
      if (parts.join(' ').length > MAX_SHOWN_VALUE * 2) break;
    }
    return fold(parts.join(' '));
  }

  /** The value a combo box whose own value is empty shows a person: the text of the smallest
   * container around it, a few levels up, that holds it and short text besides (not its label
   * or placeholder); '' when there is none before the container holds another control. */
  function shownValue(el) {
    const label = tw.labelOf(el);
    const skip = (el.getAttribute('aria-labelledby') ?? '').split(/\s+/).filter(Boolean)
      .map((id) => el.getRootNode().getElementById?.(id)).filter(Boolean);
    let container = el.parentElement;
    for (let level = 0; container && level < SHOWN_VALUE_LEVELS; level++, container = container.parentElement) {
      const others = [...container.querySelectorAll(OTHER_CONTROLS)].filter((c) => c !== el && !c.contains(el));
      if (others.length) return '';
      const text = shownText(container, el, skip);
      if (!/[\p{L}\p{N}]/u.test(text)) continue; // nothing, or a clear button's ×
      const placeholder = fold(el.getAttribute('placeholder'));
      if (text.length > MAX_SHOWN_VALUE || text === label || text === placeholder) return '';
      return text;
    }
    return '';
  }

  /** Whether a person can see `el`: rendered, not transparent, and more than the pixel that
   * "visually hidden" styles leave (Select2 keeps its `<select>` so). */
  function seenByPerson(el) {
    const r = el.getBoundingClientRect();
    return r.width > 2 && r.height > 2 && tw.isRendered(el);
  }

  // The largest box taken for one control's (a select's box, not a form's).
  const MAX_STAND_IN_HEIGHT = 120;
  const MAX_STAND_IN_WIDTH = 800;

  /** A box a person clicks that holds a form control they cannot see (Element Plus draws its
   * select as a box around a transparent `<input role=combobox>`): the box is that control to
   * them, so it takes the control's role and name into `out`. */
  function standIn(el, out) {
    if (!el.firstElementChild) return;
    // A control's box, not a panel or a card: small, and holding one form control.
    const r = el.getBoundingClientRect();
    if (r.height > MAX_STAND_IN_HEIGHT || r.width > MAX_STAND_IN_WIDTH) return;
    const controls = el.querySelectorAll('input:not([type=hidden]), select, textarea');
    if (controls.length !== 1) return;
    const control = controls[0];
    if (control.closest('[inert]')) return;
    if (seenByPerson(control)) return;
    const name = tw.labelOf(control) || fold(control.getAttribute('aria-label'));
    if (!name) return;
    out.label = clip(name);
    const role = control.getAttribute('role') || (control.localName === 'select' ? 'combobox' : '');
    if (role) out.role = role;
  }

  tw.attributesOf = function attributesOf(el) {
    const out = {};
    const names = el.getAttributeNames();
    for (const name of USEFUL_ATTRIBUTES) {
      if (!names.includes(name)) continue;
      const value = el.getAttribute(name);
      if (value !== null && value !== '') out[name] = clip(value);
    }
    const secret = tw.isSecretField(el);
    const tag = el.localName;
    if ((tag === 'input' || tag === 'textarea') && !secret) {
      if (el.type === 'checkbox' || el.type === 'radio') out.checked = String(el.checked);
      else if (el.value) out.value = clip(el.value);
      else if (tag === 'input' && isComboBox(el)) {
        const shown = shownValue(el);
        if (shown) out.value = clip(shown);
      }
    }
    if (isReadOnly(el, tag)) out.readonly = 'true';
    if (el instanceof HTMLSelectElement && !secret && el.selectedOptions.length) {
      out.value = clip(el.selectedOptions[0].textContent.replace(/\s+/g, ' ').trim());
    }
    const label = tw.labelOf(el);
    if (label) out.label = clip(label);
    else if (!LABELABLE.has(tag) && !out['aria-label'] && !out.role) standIn(el, out);
    if (tag === 'summary' && el.parentElement?.localName === 'details') {
      out['aria-expanded'] ??= String(el.parentElement.open);
    }
    return out;
  };

  // The pieces each node's text was made of, spaces left out, to say none twice.
  const pieces = new WeakMap();

  /** Appends text to an element's or a free-text node's text, folding whitespace, up to a few
   * hundred characters (the prompt shows less; a 1 MB text node must not cross the channel):
   * after a space, or joined to the last piece when `joined` (the page put none between them).
   * A piece of a few letters already there is not said twice, whatever its spacing: a card link
   * often holds its picture's alt and then the same words as its caption. */
  tw.appendText = function appendText(node, text, joined = false) {
    const room = MAX_TEXT - (node.text?.length ?? 0);
    if (room <= 0) return;
    const folded = fold(text.slice(0, room * 4)).slice(0, room);
    if (!folded) return;
    const bare = folded.replace(/ /g, '');
    let seen = pieces.get(node);
    if (!joined && bare.length >= MIN_REPEAT && seen?.has(bare)) return;
    if (!seen) pieces.set(node, (seen = new Set()));
    seen.add(bare);
    node.text = node.text ? `${node.text}${joined ? '' : ' '}${folded}` : folded;
  };
})();
