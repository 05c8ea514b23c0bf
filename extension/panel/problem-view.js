// A problem as a person reads it, wherever the panel shows one (a refused request, a step that
// failed, a task that ended on an error): the core's message in their language; beneath it,
// folded, the words that were not written for them (what the model was told, as it was told);
// and a button to the settings when the settings can fix it (the core says so, `remedy`).
import { t, coreText } from '../i18n.js';
import { el } from '../dom.js';

/** @typedef {import('tabwright-types/from-core').LocaleText} LocaleText */

/** Whether the settings can fix what `text`, or its cause, tells of. */
export function settingsCanFix(/** @type {LocaleText | null | undefined} */ text) {
  return !!text && (text.remedy === 'open_settings' || settingsCanFix(text.cause));
}

/** The button that opens the settings. */
export function settingsButton() {
  const open = el('button', 'link-button', t('openSettings'));
  open.type = 'button';
  open.addEventListener('click', () => chrome.runtime.openOptionsPage());
  return open;
}

/**
 * Fills `box` with the problem `said` (`{message, locale_text}` as the core sends it): `text`
 * (its own, unless given) in a `.problem-text`, then the folded detail and the settings button
 * when there are some. Returns the text shown, to compare one problem with another.
 * @param {HTMLElement} box
 * @param {{message?: string | null, locale_text?: LocaleText | null}} said
 * @param {string} [text]
 */
export function showProblem(box, said, text = coreText(said)) {
  box.replaceChildren(el('span', 'problem-text', text));
  const detail = said.locale_text?.detail;
  if (detail && detail !== text) {
    const more = el('details', 'problem-detail');
    more.append(el('summary', '', t('problemDetail')), el('pre', '', detail));
    box.append(more);
  }
  if (settingsCanFix(said.locale_text)) box.append(' ', settingsButton());
  return text;
}
