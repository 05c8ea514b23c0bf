// What the model is told about an element: a short list of useful attributes, the name a
// label gives it, and the visible text that belongs to it. Secrets never leave the page: the
// values of password fields and of payment-card fields (autocomplete=cc-*) are not read at all.
//
// A control's label often lies elsewhere in the page (`<label for>`, `aria-labelledby` naming
// another element): three combo boxes of one form would all read `<input role=combobox>`.
// So the name those give it is sent as `label` (the element's own `aria-label` and `title`
// are sent as themselves; the core shows each name once).
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
        // An element naming itself among others (MUI's select) adds its own text, not a label.
        return named && named !== el ? namingText(named) : '';
      });
      const name = fold(parts.join(' '));
      if (name) return name;
    }
    if (fold(el.getAttribute('aria-label'))) return '';
    if (LABELABLE.has(el.localName) && el.labels?.length) {
      const names = [...el.labels].map((label) => {
        // The label's words without those of the control inside it (its value, its options).
        const copy = label.cloneNode(true);
        for (const inner of copy.querySelectorAll('input, select, textarea, button')) inner.remove();
        return fold(copy.textContent);
      });
      return fold(names.join(' '));
    }
    return '';
  };

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
    const label = tw.labelOf(el);
    if (label) out.label = clip(label);
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
