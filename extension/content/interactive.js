// Would a person see this element as something to click, type into or choose from?
//
// classify(el, cursor, parentCursor, hasListener) answers 'strong', 'weak' or null (`cursor` is
// the element's computed cursor):
//   strong — the element is an interaction of its own, even inside another one:
//     native controls (links with href, buttons, inputs, selects, text areas, summary),
//     editable regions (the contenteditable host), interactive ARIA roles, focusable custom
//     widgets (tabindex >= 0), dropdown hints (aria-haspopup, data-toggle=dropdown), elements
//     with a click listener or on-click attribute, and a label whose own control is hidden
//     (custom checkboxes and radios: the label is what a person clicks). A click listener on
//     the page itself or on a container most of a screen large is event delegation (React's
//     root, "click outside to close"), not a button, and does not count.
//   weak — only the mouse cursor says so: an "active" cursor (pointer, grab, move, resize…)
//     that begins at this element rather than being inherited from its parent; or it is an <a>
//     without href and without a name. The HTML standard calls such an anchor a placeholder,
//     but on the web it is mostly a link or a menu toggle that a script drives: a React
//     `<a onClick>` has no listener of its own (React listens at its root), and its pointer
//     cursor comes from a stylesheet that may not say so. A named anchor (`<a name=…>`) is a
//     place to jump to, not a control. Like the cursor, it counts only outside another
//     indexed element.
// Disabled controls (their own attribute or a disabled fieldset), aria-disabled elements and
// anything inside an inert subtree are not interactive. A read-only text field counts: a person
// clicks it (date pickers are often read-only inputs that open a calendar), and text.js marks it
// read-only so it is clicked rather than typed into.
//
// Two more things a person sees that no handler of the element's own says:
//   - things made to be dragged (isDragSource): `draggable=true`, a grab or move cursor that
//     starts at the element, `aria-grabbed`, jQuery UI's markers (`ui-sortable-handle` on a
//     sortable list's items, or on their handles when it has some; `ui-draggable`). They are
//     controls of their own (strong), so a sortable list with no click handler still has items
//     to drag.
//   - separate items under one handler (separateItems): a suggestion list or a row of actions
//     whose one listener (or focus) sits on the container, which tells its items apart by the
//     event's target (jQuery's delegated handlers, jQuery UI's menu). What the container holds
//     is two or more pieces alike — the same tag, a class in common (or, with no class, list
//     items or boxes on their own line), all words or all pictures — each with its own words
//     or name and its own box, none overlapping the next, and nothing else with words. The
//     indexer lists those items instead of the container. An icon and its label (unlike
//     pieces) or a card's title, text and tags (not all alike) stay one control.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const ACTIVE_CURSORS = new Set([
    'pointer', 'move', 'grab', 'grabbing', 'cell', 'copy', 'alias', 'all-scroll', 'col-resize', 'row-resize',
    'context-menu', 'crosshair', 'help', 'zoom-in', 'zoom-out', 'e-resize', 'w-resize', 'n-resize', 's-resize',
    'ne-resize', 'nw-resize', 'se-resize', 'sw-resize', 'ew-resize', 'ns-resize', 'nesw-resize', 'nwse-resize',
    'vertical-text',
  ]);
  const ROLES = new Set([
    'button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'radio', 'checkbox', 'tab', 'switch',
    'slider', 'spinbutton', 'combobox', 'searchbox', 'textbox', 'option', 'treeitem', 'listbox', 'gridcell',
  ]);
  const FORM_CONTROLS = new Set(['button', 'input', 'select', 'textarea']);
  // Cursors that say "this moves": set on an element, it is made to be dragged.
  const DRAG_CURSORS = new Set(['grab', 'move', 'grabbing']);
  // jQuery UI's marks on what its sortable and draggable widgets drag.
  const JQUERY_UI_DRAG = /(?:^|\s)ui-(?:sortable-handle|draggable)(?:\s|$)/;
  // Roles of containers whose items have roles of their own.
  const ITEM_ROLES = new Set(['menu', 'menubar', 'tablist', 'tree', 'treegrid', 'grid', 'radiogroup']);
  // Elements that are not items of a list of choices: text and page structure.
  const NOT_ITEMS = new Set([
    'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'table', 'thead', 'tbody', 'figure',
    'section', 'article', 'header', 'footer', 'main', 'nav', 'aside', 'form', 'fieldset', 'ul', 'ol', 'dl',
    'br', 'hr', 'script', 'style', 'template', 'noscript', 'input', 'select', 'textarea',
  ]);
  // List items and rows are items without a class to say so.
  const LIST_ITEMS = new Set(['li', 'tr', 'option', 'dt']);
  // A wrapper of one child between a container and its items (a menu's inner list) is looked
  // through, this many deep.
  const MAX_WRAPPERS = 2;
  // A container with more pieces than this is not looked at piece by piece.
  const MAX_ITEMS = 500;

  /** A label whose control is not something a person could click directly. */
  function labelsHiddenControl(el) {
    const control = el.control;
    if (!control) return false;
    const rect = control.getBoundingClientRect();
    return !(tw.hasSize(rect) && tw.isRendered(control));
  }

  function isNativeControl(el, tag) {
    switch (tag) {
      case 'a': return el.hasAttribute('href');
      case 'button': case 'select': case 'textarea': case 'summary': return true;
      case 'input': return el.type !== 'hidden';
      case 'label': return labelsHiddenControl(el);
      default: return false;
    }
  }

  /** A delegating container: the page, or an element most of a screen large. */
  function isDelegationRoot(el, tag) {
    if (tag === 'html' || tag === 'body') return true;
    const r = el.getBoundingClientRect();
    return r.width * r.height >= 0.5 * innerWidth * innerHeight;
  }

  function isOff(el, tag) {
    if (FORM_CONTROLS.has(tag) && el.matches(':disabled')) return true;
    if (el.getAttribute('aria-disabled') === 'true') return true;
    return el.closest('[inert]') !== null;
  }

  /** Whether the page made `el` to be dragged (see the top of the file); `isItem`: it is one of
   * the separate items of a container, whose cursor it shares. */
  function dragSource(el, names, cursor, parentCursor, isItem) {
    if (DRAG_CURSORS.has(cursor) && (cursor !== parentCursor || isItem)) return true;
    if (names.includes('draggable') && el.getAttribute('draggable') === 'true') return true;
    if (names.includes('aria-grabbed')) return true;
    if (!names.includes('class')) return false;
    const classes = el.getAttribute('class') ?? '';
    return classes.includes('ui-') && JQUERY_UI_DRAG.test(classes);
  }

  tw.isDragSource = function isDragSource(el, cursor, parentCursor, isItem = false) {
    return dragSource(el, el.getAttributeNames(), cursor, parentCursor, isItem);
  };

  /** `hasListener`: a click listener was seen on it; `isItem`: it is one of the separate items
   * of a container listed in its place (separateItems), whose handler is its own. */
  tw.classify = function classify(el, cursor, parentCursor, hasListener, isItem = false) {
    const tag = el.localName;
    const cursorStarts = ACTIVE_CURSORS.has(cursor) && cursor !== parentCursor;
    // The attributes looked at below, named in one call rather than asked for one by one.
    const names = el.getAttributeNames();
    // A label's click listener (a script focusing its control) does not make it a control: it
    // names one, and a click on it reaches that control.
    const clickHandler = (hasListener || names.includes('onclick')) && !isDelegationRoot(el, tag) && tag !== 'label';
    // Signals besides being a native control.
    const marked = isItem
      || (el.isContentEditable && !el.parentElement?.isContentEditable)
      || (names.includes('role') && ROLES.has(el.getAttribute('role')))
      || clickHandler
      || (names.includes('tabindex') && el.tabIndex >= 0)
      || (names.includes('aria-haspopup') && el.getAttribute('aria-haspopup') !== 'false')
      || (names.includes('data-toggle') && el.getAttribute('data-toggle') === 'dropdown')
      || dragSource(el, names, cursor, parentCursor, false);
    const native = isNativeControl(el, tag);
    const scriptedAnchor = tag === 'a' && !native && !names.includes('name');
    if (!native && !marked && !cursorStarts && !scriptedAnchor) return null;
    if (isOff(el, tag)) return null;
    if (native || marked) return 'strong';
    return cursorStarts || scriptedAnchor ? 'weak' : null;
  };

  /** Whether `el` could hold separate items its role or tag does not already say: not a native
   * control, no interactive role, and no role that names its items (a menu's are menu items). */
  function mayHoldItems(el) {
    const tag = el.localName;
    if (FORM_CONTROLS.has(tag) || tag === 'a' || tag === 'summary' || tag === 'label') return false;
    const role = el.getAttribute('role');
    return !role || !(ROLES.has(role) || ITEM_ROLES.has(role));
  }

  /** What names a piece: 'words' (letters or digits), 'name' (only an aria-label or title, or
   * an icon that names itself: text.js, iconName), or '' (decoration). */
  function namedBy(el) {
    if (/[\p{L}\p{N}]/u.test(el.textContent)) return 'words';
    if (el.hasAttribute('aria-label') || el.hasAttribute('title') || tw.iconName(el)) return 'name';
    for (const inner of el.querySelectorAll('img, svg, [class]')) if (tw.iconName(inner)) return 'name';
    return '';
  }

  /** The classes of a piece, as a set (an empty one when it has none). */
  const classesOf = (el) => new Set(el.classList);

  /** Whether two boxes overlap by more than a sliver. */
  function overlap(a, b) {
    return Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  }

  /** The separate items a container is made of (see the top of the file), or null when it is
   * not made of such items. Looked for only in a container listed for a listener, focus or a
   * cursor of its own. */
  tw.separateItems = function separateItems(el) {
    let holder = el;
    for (let wrappers = 0; wrappers <= MAX_WRAPPERS; wrappers++) {
      if (!mayHoldItems(holder)) return null;
      // First what costs nothing: words of the container's own, and whether two pieces could
      // be alike at all (most containers are one control with one or two unlike children).
      const children = [];
      const tags = new Map();
      for (const node of tw.renderedChildren(holder)) {
        if (node.nodeType === Node.TEXT_NODE) {
          if (/[\p{L}\p{N}]/u.test(/** @type {Text} */ (node).data)) return null;
          continue;
        }
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        const child = /** @type {Element} */ (node);
        const tag = child.localName;
        if (tag === 'script' || tag === 'style' || tag === 'template') continue;
        if (children.push(child) > MAX_ITEMS) return null;
        tags.set(tag, (tags.get(tag) ?? 0) + 1);
      }
      if (children.length === 1) {
        // A wrapper around the items (or the one piece of a single control): looked through.
        holder = children[0];
        continue;
      }
      if (![...tags].some(([tag, count]) => count >= 2 && !NOT_ITEMS.has(tag))) return null;
      // The pieces a person sees: shown, with words or a name (others are decoration).
      const pieces = [];
      for (const piece of children) {
        const box = piece.getBoundingClientRect();
        const named = tw.hasSize(box) ? namedBy(piece) : '';
        if (named) pieces.push({ piece, box, named });
      }
      if (pieces.length === 1) {
        holder = pieces[0].piece;
        continue;
      }
      if (pieces.length < 2) return null;
      const first = pieces[0].piece;
      const tag = first.localName;
      if (NOT_ITEMS.has(tag) || pieces.some(({ piece }) => piece.localName !== tag)) return null;
      // All words or all pictures: an icon beside its label is one control.
      if (pieces.some(({ named }) => named !== pieces[0].named)) return null;
      // A class in common, or none on any: then list items, or boxes each on a line of its own.
      const shared = classesOf(first);
      for (const { piece } of pieces) for (const name of shared) if (!piece.classList.contains(name)) shared.delete(name);
      if (!shared.size) {
        if (pieces.some(({ piece }) => piece.classList.length)) return null;
        if (!LIST_ITEMS.has(tag) && pieces.some(({ piece }) => getComputedStyle(piece).display.startsWith('inline'))) return null;
      }
      for (let i = 1; i < pieces.length; i++) if (overlap(pieces[i - 1].box, pieces[i].box)) return null;
      return pieces.map(({ piece }) => piece);
    }
    return null;
  };
})();
