// What the page says of the element an act is aimed at, read just before the act for the core's
// guard (src/guard): its accessible name, value and title, a link's target, and the form the act
// would send with the kinds of its fields. The core decides from these whether the act waits for
// the person's yes; the click then carries them back, and is refused if the page changed them in
// between (a label swapped after the check, a form's action moved), so what was checked is what
// is clicked. While that click runs, no form but the one checked is sent (`guardSubmissions`).
(() => {
  const tw = (globalThis.tabwright ??= {});

  const MAX_NAME = 200;
  const MAX_FIELDS = 100;
  const fold = (text) => String(text ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_NAME);
  const TEXT_ENTRY = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number', 'date', 'datetime-local', 'month', 'week', 'time']);

  /** The name a person or a screen reader is given for `el`. */
  function accessibleName(el) {
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const scope = el.getRootNode();
      const named = by.split(/\s+/).map((id) => scope.getElementById?.(id) ?? document.getElementById(id)).filter(Boolean);
      const text = fold(named.map((n) => n.innerText || n.textContent).join(' '));
      if (text) return text;
    }
    const label = fold(el.getAttribute('aria-label')) || fold(tw.labelOf?.(el));
    if (label) return label;
    if (el instanceof HTMLInputElement && (el.type === 'submit' || el.type === 'button' || el.type === 'reset')) return fold(el.value);
    if (el instanceof HTMLInputElement && el.type === 'image') return fold(el.alt);
    const text = fold(el.innerText || el.textContent);
    if (text) return text;
    return fold(el.querySelector?.('img[alt]')?.getAttribute('alt'));
  }

  /** Whether acting on `el` sends its form: a submit button, or Enter in a text field. */
  function submits(el) {
    if (!el.form) return false;
    if (el instanceof HTMLButtonElement) return el.type === 'submit';
    if (el instanceof HTMLInputElement) return el.type === 'submit' || el.type === 'image' || TEXT_ENTRY.has(el.type);
    return false;
  }

  /** The address a form (sent by `submitter`) goes to, absolute. Read from the attributes: a
   * field named "action" would shadow `form.action`. */
  function actionOf(form, submitter) {
    const attribute = submitter?.getAttribute?.('formaction') || form.getAttribute('action') || '';
    try {
      return new URL(attribute || location.href, document.baseURI).href;
    } catch {
      return attribute;
    }
  }

  /** Whether a field holds something: a file chosen, a box ticked, a value. */
  function filledField(f) {
    if (f instanceof HTMLInputElement && f.type === 'file') return (f.files?.length ?? 0) > 0;
    if (f instanceof HTMLInputElement && (f.type === 'checkbox' || f.type === 'radio')) return f.checked;
    return f.value !== '';
  }

  function formFacts(form, submitter) {
    const fields = [];
    for (const f of [...form.elements].slice(0, MAX_FIELDS)) {
      if (!(f instanceof HTMLInputElement || f instanceof HTMLSelectElement || f instanceof HTMLTextAreaElement)) continue;
      const type = f instanceof HTMLInputElement ? f.type : '';
      fields.push({
        tag: f.localName,
        type,
        autocomplete: f.getAttribute('autocomplete') || '',
        name: fold(f.getAttribute('name')),
        id: fold(f.id),
        placeholder: fold(f.getAttribute('placeholder')),
        label: fold(f.getAttribute('aria-label')) || fold(tw.labelOf?.(f)),
        filled: filledField(f),
        // What it sends, for the core's check of data crossing sites; never a secret's value.
        value: type === 'file' || type === 'password' || tw.isSecretField?.(f) ? '' : fold(f.value),
      });
    }
    const button = form.querySelector('button:not([type]), button[type="submit"], input[type="submit"], input[type="image"]');
    return {
      action: actionOf(form, submitter),
      method: (submitter?.getAttribute?.('formmethod') || form.getAttribute('method') || 'get').toLowerCase(),
      submitter: button ? accessibleName(button) : '',
      fields,
    };
  }

  /** The facts of `el` (src/guard/held.rs `ActFacts`), always in the same order of keys, so
   * their JSON text can be compared. */
  tw.actFacts = function actFacts(el) {
    const form = el.form ?? el.closest?.('form') ?? null;
    const isSubmit = submits(el);
    return {
      tag: el.localName,
      role: el.getAttribute('role') || '',
      type: el instanceof HTMLInputElement || el instanceof HTMLButtonElement ? el.type : (el.getAttribute('type') || ''),
      name: accessibleName(el),
      value: el instanceof HTMLButtonElement || (el instanceof HTMLInputElement && !tw.isSecretField?.(el) && el.type !== 'password') ? fold(el.value) : '',
      title: fold(el.getAttribute('title')),
      href: (el instanceof HTMLAnchorElement || el instanceof HTMLAreaElement) && el.href ? el.href : '',
      download: el.hasAttribute('download') ? el.getAttribute('download') : null,
      submits: isSubmit,
      form: form ? formFacts(form, isSubmit ? el : null) : null,
      document_url: location.href,
    };
  };

  /** The innermost element at the point, or focused, through open and closed shadow roots. */
  function deepest(el, next) {
    let inner = el;
    for (let depth = 0; inner && depth < 32; depth++) {
      const root = inner.shadowRoot ?? chrome.dom?.openOrClosedShadowRoot?.(inner) ?? null;
      const found = root ? next(root) : null;
      if (!found || found === inner) break;
      inner = found;
    }
    return inner;
  }

  /** The reply to `act_facts`: of element `index`, of the element at `point`, or of the focused one. */
  tw.actFactsFor = function actFactsFor(index, point) {
    let el = null;
    if (Number.isInteger(index)) el = tw.elementAt(index);
    else if (Array.isArray(point)) el = deepest(document.elementFromPoint(point[0], point[1]), (root) => root.elementFromPoint(point[0], point[1]));
    else el = deepest(document.activeElement, (root) => root.activeElement);
    if (!el) return { ok: false, code: 'element_gone', message: 'there is no such element on the page now' };
    return { ok: true, result: { facts_json: JSON.stringify(tw.actFacts(el)) } };
  };

  /** Whether `el` still has the facts checked (`expect`, their JSON text); none expected: yes. */
  tw.factsUnchanged = function factsUnchanged(el, expect) {
    return typeof expect !== 'string' || JSON.stringify(tw.actFacts(el)) === expect;
  };

  /** While a checked click on `el` runs: no form is sent but the one checked, as it was checked.
   * A submit is cancelled; a form sent from script (`form.submit()`, which fires no submit
   * event) has its entries taken out and the page's loading stopped. Returns `end()`, which
   * says what was stopped. */
  tw.guardSubmissions = function guardSubmissions(el, expect) {
    const own = el.form ?? el.closest?.('form') ?? null;
    const stopped = [];
    const allowed = (form) => form === own && tw.factsUnchanged(el, expect);
    const onSubmit = (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || allowed(form)) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      stopped.push(actionOf(form, null));
    };
    const onFormData = (event) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || allowed(form)) return;
      for (const key of [...event.formData.keys()]) event.formData.delete(key);
      stopped.push(actionOf(form, null));
      queueMicrotask(() => window.stop());
      setTimeout(() => window.stop(), 0);
    };
    window.addEventListener('submit', onSubmit, true);
    window.addEventListener('formdata', onFormData, true);
    return {
      end() {
        window.removeEventListener('submit', onSubmit, true);
        window.removeEventListener('formdata', onFormData, true);
        return stopped;
      },
    };
  };
})();
