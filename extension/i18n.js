// The extension pages' strings come from _locales through chrome.i18n, in the browser's UI
// language (en and zh_CN are complete; others fall back to en).
//
// Static text in the HTML names its message in attributes, filled in by `localize`:
//   data-i18n              → textContent
//   data-i18n-placeholder  → placeholder
//   data-i18n-title        → title
//   data-i18n-aria-label   → aria-label
// Text built in script calls `t(name, substitutions)`.

/** The message `name` with its $1…$9 substitutions (strings or numbers); the name itself
 * when the message is missing, so a forgotten string shows up rather than vanishing. */
export function t(name, substitutions) {
  const subs = substitutions === undefined ? undefined
    : (Array.isArray(substitutions) ? substitutions : [substitutions]).map(String);
  return chrome.i18n.getMessage(name, subs) || name;
}

/** A message of the core (a refusal, or why a task ended: `{message, locale_text}`) in the UI
 * language: the message its `locale_text` names in _locales (`core_…`, see src/message.rs),
 * or the core's own English when there is none. */
export function coreText(said) {
  const render = (text) => {
    const cause = text.cause ? render(text.cause) : undefined;
    if (cause === null) return null;
    const args = [...(text.args ?? []), ...(cause === undefined ? [] : [cause])].map(String);
    return chrome.i18n.getMessage(`core_${text.key}`, args) || null;
  };
  return (said?.locale_text && render(said.locale_text)) || said?.message || '';
}

/** The UI language as a BCP 47 tag, for number and date formatting. */
export const uiLanguage = () => chrome.i18n.getUILanguage();

// The formatters, made once: making one looks up the language's rules every time, which costs
// far more than the formatting (the panel formats a count on every step).
let numbers = null;
let times = null;

/** A whole number with the UI language's digit grouping. */
export const formatNumber = (n) => (numbers ??= new Intl.NumberFormat(uiLanguage())).format(Number(n));

/** A moment (ms since the epoch) as the UI language writes a date and time. */
export const formatTime = (ms) => (times ??= new Intl.DateTimeFormat(uiLanguage(), { dateStyle: 'medium', timeStyle: 'short' })).format(new Date(ms));

const ATTRIBUTES = [['i18nPlaceholder', 'placeholder'], ['i18nTitle', 'title'], ['i18nAriaLabel', 'aria-label']];

/** Fills in every marked string under `root`, and the document's language. */
export function localize(root = document) {
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = t(/** @type {HTMLElement} */ (node).dataset.i18n);
  for (const [key, attribute] of ATTRIBUTES) {
    const selector = `[data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}]`;
    for (const node of root.querySelectorAll(selector)) node.setAttribute(attribute, t(/** @type {HTMLElement} */ (node).dataset[key]));
  }
  if (root === document) {
    document.documentElement.lang = uiLanguage();
    const title = document.querySelector('title[data-i18n]');
    if (title) document.title = title.textContent;
  }
}
