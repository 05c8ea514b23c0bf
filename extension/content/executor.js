// The hands inside the page: click and type into elements found by their index.
//
// Clicks replay the event sequence a person's click produces (pointer and mouse down/up, then
// click) so pages that listen for any of them react. Typing uses the native value setter of the
// element's prototype before dispatching `input` and `change`: React and similar libraries
// track the value through that setter and ignore a plain `.value =`.
(() => {
  const tw = (globalThis.tabwright ??= {});

  const gone = (index) => ({ ok: false, code: 'element_gone', message: `element [${index}] is no longer on the page` });
  const unsuitable = (message) => ({ ok: false, code: 'unsuitable', message });

  function centreOf(el) {
    const r = el.getBoundingClientRect();
    return { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 };
  }

  tw.click = function click(index) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    if (el.matches(':disabled')) return unsuitable('it is disabled');
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const at = { bubbles: true, cancelable: true, composed: true, view: window, button: 0, ...centreOf(el) };
    el.dispatchEvent(new PointerEvent('pointerdown', { ...at, pointerType: 'mouse', isPrimary: true }));
    el.dispatchEvent(new MouseEvent('mousedown', at));
    if (typeof el.focus === 'function') el.focus({ preventScroll: true });
    el.dispatchEvent(new PointerEvent('pointerup', { ...at, pointerType: 'mouse', isPrimary: true }));
    el.dispatchEvent(new MouseEvent('mouseup', at));
    el.click(); // dispatches `click` and runs the element's activation (links, submit buttons)
    return { ok: true };
  };

  function setNativeValue(el, value) {
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
    if (setter) setter.call(el, value);
    else el.value = value;
  }

  tw.input = function input(index, text, clear) {
    const el = tw.elementAt(index);
    if (!el) return gone(index);
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    el.focus({ preventScroll: true });
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      if (el.matches(':disabled') || el.readOnly) return unsuitable('it is disabled or read-only');
      const wanted = clear ? text : el.value + text;
      setNativeValue(el, wanted);
      el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      // Date, number and similar fields silently drop text they cannot parse.
      if (el.value !== wanted && el.value === '' && wanted !== '') {
        return unsuitable(`the field refused ${JSON.stringify(text)}; a ${el.type} field needs its own format (for a date: YYYY-MM-DD)`);
      }
      return { ok: true };
    }
    if (el.isContentEditable) {
      const selection = getSelection();
      selection.selectAllChildren(el);
      if (!clear) selection.collapseToEnd();
      document.execCommand('insertText', false, text);
      return { ok: true };
    }
    return unsuitable(`a <${el.tagName.toLowerCase()}> does not take text; choose an input, text area or editable element`);
  };
})();
