// What the model is told about an element: a short list of useful attributes and the visible
// text that belongs to it. Secrets never leave the page: the values of password fields and of
// payment-card fields (autocomplete=cc-*) are not read at all.
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
    const folded = text.slice(0, room * 4).replace(/\s+/g, ' ').trim().slice(0, room);
    if (!folded) return;
    const bare = folded.replace(/ /g, '');
    let seen = pieces.get(node);
    if (!joined && bare.length >= MIN_REPEAT && seen?.has(bare)) return;
    if (!seen) pieces.set(node, (seen = new Set()));
    seen.add(bare);
    node.text = node.text ? `${node.text}${joined ? '' : ' '}${folded}` : folded;
  };
})();
