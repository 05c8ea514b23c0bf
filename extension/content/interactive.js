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
// anything inside an inert subtree are not interactive. A read-only text field counts only if
// something else marks it clickable (date pickers are often read-only inputs that open a
// calendar).
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

  const TEXT_INPUTS = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number', 'date', 'datetime-local', 'month', 'week', 'time']);

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

  tw.classify = function classify(el, cursor, parentCursor, hasListener) {
    const tag = el.localName;
    const cursorStarts = ACTIVE_CURSORS.has(cursor) && cursor !== parentCursor;
    // The attributes looked at below, named in one call rather than asked for one by one.
    const names = el.getAttributeNames();
    // A label's click listener (a script focusing its control) does not make it a control: it
    // names one, and a click on it reaches that control.
    const clickHandler = (hasListener || names.includes('onclick')) && !isDelegationRoot(el, tag) && tag !== 'label';
    // Signals besides being a native control.
    const marked = (el.isContentEditable && !el.parentElement?.isContentEditable)
      || (names.includes('role') && ROLES.has(el.getAttribute('role')))
      || clickHandler
      || (names.includes('tabindex') && el.tabIndex >= 0)
      || (names.includes('aria-haspopup') && el.getAttribute('aria-haspopup') !== 'false')
      || (names.includes('data-toggle') && el.getAttribute('data-toggle') === 'dropdown');
    let native = isNativeControl(el, tag);
    const scriptedAnchor = tag === 'a' && !native && !names.includes('name');
    if (!native && !marked && !cursorStarts && !scriptedAnchor) return null;
    if (isOff(el, tag)) return null;
    // A read-only text field is only worth a number if something else makes it clickable.
    const readOnlyText = (tag === 'textarea' || (tag === 'input' && TEXT_INPUTS.has(el.type))) && el.readOnly;
    if (readOnlyText && !marked && !cursorStarts) native = false;
    if (native || marked) return 'strong';
    return cursorStarts || scriptedAnchor ? 'weak' : null;
  };
})();
