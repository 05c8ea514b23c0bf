// Would a person see this element as something to click, type into or choose from?
//
// classify(el, style, parentCursor, hasListener) answers 'strong', 'weak' or null:
//   strong — the element is an interaction of its own, even inside another one:
//     native controls (links with href, buttons, inputs, selects, text areas, summary),
//     editable regions (the contenteditable host), interactive ARIA roles, focusable custom
//     widgets (tabindex >= 0), dropdown hints (aria-haspopup, data-toggle=dropdown), elements
//     with a click listener or on-click attribute, and a label whose own control is hidden
//     (custom checkboxes and radios: the label is what a person clicks).
//   weak — only the mouse cursor says so: an "active" cursor (pointer, grab, move, resize…)
//     that begins at this element rather than being inherited from its parent.
// Disabled controls, aria-disabled elements and anything inside an inert subtree are not
// interactive. A read-only field counts only if something else marks it clickable (date
// pickers are often read-only inputs that open a calendar).
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

  function isOff(el, tag) {
    if (FORM_CONTROLS.has(tag) && el.disabled) return true;
    if (el.getAttribute('aria-disabled') === 'true') return true;
    return el.closest('[inert]') !== null;
  }

  tw.classify = function classify(el, style, parentCursor, hasListener) {
    const tag = el.localName;
    const cursorStarts = ACTIVE_CURSORS.has(style.cursor) && style.cursor !== parentCursor;
    let strong = isNativeControl(el, tag)
      || (el.isContentEditable && !el.parentElement?.isContentEditable)
      || ROLES.has(el.getAttribute('role'))
      || hasListener
      || el.hasAttribute('onclick')
      || (el.tabIndex >= 0 && el.hasAttribute('tabindex'))
      || (el.hasAttribute('aria-haspopup') && el.getAttribute('aria-haspopup') !== 'false')
      || el.getAttribute('data-toggle') === 'dropdown';
    if (!strong && !cursorStarts) return null;
    if (isOff(el, tag)) return null;
    // A read-only text field is only worth a number if it is also clickable.
    if (strong && (tag === 'input' || tag === 'textarea') && el.readOnly && !hasListener && !cursorStarts) strong = false;
    if (strong) return 'strong';
    return cursorStarts ? 'weak' : null;
  };
})();
