// What the model is told about an element: a short list of useful attributes and the visible
// text that belongs to it. Secrets never leave the page: the values of password fields and of
// payment-card fields (autocomplete=cc-*) are not read at all.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const MAX_VALUE = 200;
  const MAX_TEXT = 2 * MAX_VALUE;
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
    }
    if (el instanceof HTMLSelectElement && !secret && el.selectedOptions.length) {
      out.value = clip(el.selectedOptions[0].textContent.replace(/\s+/g, ' ').trim());
    }
    if (tag === 'summary' && el.parentElement?.localName === 'details') {
      out['aria-expanded'] ??= String(el.parentElement.open);
    }
    return out;
  };

  /** Appends text to an element's or a free-text node's text, folding whitespace, up to a few
   * hundred characters (the prompt shows less; a 1 MB text node must not cross the channel). */
  tw.appendText = function appendText(node, text) {
    const room = MAX_TEXT - (node.text?.length ?? 0);
    if (room <= 0) return;
    const folded = text.slice(0, room * 4).replace(/\s+/g, ' ').trim().slice(0, room);
    if (!folded) return;
    node.text = node.text ? `${node.text} ${folded}` : folded;
  };
})();
