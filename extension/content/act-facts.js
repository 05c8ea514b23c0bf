// What the page says of the element an act is aimed at, read just before the act for the core's
// guard (src/guard): its accessible name, value and title, a link's target, and the form the act
// would send with the kinds of its fields. The core decides from these whether the act waits for
// the person's yes; the click then carries them back, and is refused if the page changed them in
// between (a label swapped after the check, a form's action moved), so what was checked is what
// is clicked. While that click runs, no form but the one checked is sent (`guardSubmissions`).
(() => {
  const tw = (globalThis.tabwright ??= {});

  const MAX_NAME = 200;
  // A field's value is sent whole up to this, for the core's check of data crossing sites.
  const MAX_VALUE = 4_000;
  const MAX_FIELDS = 100;
  // Characters a page can put inside a word to break it for a check, invisible to a person.
  const INVISIBLE = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g;
  const fold = (text, max = MAX_NAME) => String(text ?? '').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim().slice(0, max);
  const TEXT_ENTRY = new Set(['', 'text', 'search', 'email', 'url', 'tel', 'password', 'number', 'date', 'datetime-local', 'month', 'week', 'time']);

  /** The name a screen reader is given for `el` (`aria-labelledby`, then `aria-label`, then its
   * `<label>`s, through text.js's `labelOf`); else what it shows. The text it shows is sent too
   * (`text`): a page may name an element one thing and show another. */
  function accessibleName(el) {
    const label = fold(tw.labelOf?.(el)) || fold(el.getAttribute('aria-label'));
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

  /** A field whose kind alone holds the form (a password, a file, a payment card): listed
   * first, so no number of fields in front of it can push it out of the list. */
  const telling = (f) => f instanceof HTMLInputElement && (f.type === 'password' || f.type === 'file' || tw.isSecretField?.(f));

  function formFacts(form, submitter) {
    const fields = [];
    const all = [...form.elements].filter((f) => f instanceof HTMLInputElement || f instanceof HTMLSelectElement || f instanceof HTMLTextAreaElement);
    const listed = [...all.filter(telling), ...all.filter((f) => !telling(f))].slice(0, MAX_FIELDS);
    for (const f of listed) {
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
        value: type === 'file' || type === 'password' || tw.isSecretField?.(f) ? '' : fold(f.value, MAX_VALUE),
      });
    }
    const button = form.querySelector('button:not([type]), button[type="submit"], input[type="submit"], input[type="image"]');
    return {
      action: actionOf(form, submitter),
      method: (submitter?.getAttribute?.('formmethod') || form.getAttribute('method') || 'get').toLowerCase(),
      submitter: button ? accessibleName(button) : '',
      fields,
      // Fields left out of the list: the core holds a form it could not see whole.
      more_fields: all.length - listed.length,
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
      text: fold(el.innerText || el.textContent),
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
    // The element's own form was checked only if the act sends it, as the core counts that
    // (src/guard/held.rs `form_sent`): a submit, or a button whose script may send it.
    const facts = tw.actFacts(el);
    const button = facts.tag === 'button' || facts.role === 'button'
      || (facts.tag === 'input' && ['button', 'submit', 'image'].includes(facts.type));
    const own = facts.submits || button ? (el.form ?? el.closest?.('form') ?? null) : null;
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
