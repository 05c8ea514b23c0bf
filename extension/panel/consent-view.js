// What the task holds for the person's yes (the core's guard: a new site, an act that cannot be
// undone, text carried from one site to another), drawn as a box in the step's card: the act in
// the reader's language, why it is held, and a button per choice the core offers; once answered,
// the decision in its place. The live chat, a past conversation and the report all word a
// consent with these functions.
//
// The box is an alertdialog named by its heading and described by the act and the reason, so a
// screen reader says what is asked when focus moves to its first button.
import { t, coreText } from '../i18n.js';
import { el } from '../dom.js';

/** @typedef {import('tabwright-types/from-core').Consent} Consent */

/** The act held, in the reader's language (the core's English when _locales has no such message). */
export const consentAct = (/** @type {Consent} */ consent) => coreText({ message: consent.act, locale_text: consent.act_locale_text });

/** Why it is held, in the reader's language. */
export const consentReason = (/** @type {Consent} */ consent) =>
  coreText({ message: consent.reason, locale_text: consent.reason_locale_text });

/** The heading of a consent of `kind`. */
export function consentTitle(kind) {
  switch (kind) {
    case 'new_site':
      return t('consentTitleNewSite');
    case 'held_act':
      return t('consentTitleHeldAct');
    case 'data_crossing':
      return t('consentTitleDataCrossing');
    default:
      return t('consentTitle');
  }
}

/** A choice's button label: the same answer reads differently for each kind (allowing once a
 * new site, or an order that cannot be undone). */
export function choiceLabel(kind, choice, site) {
  switch (choice) {
    case 'allow_once':
      return t(kind === 'new_site' ? 'consentAllowOnce' : 'consentAllow');
    case 'allow_for_task':
      return kind === 'held_act' ? t('consentAllowActsForTask', [site]) : t('consentAllowForTask');
    case 'always':
      return t('consentAlways', [site]);
    case 'deny':
      return t('consentDeny');
    default:
      return choice;
  }
}

/** What the person decided, as the box says it once answered. */
export function decisionText(kind, answer, site) {
  switch (answer) {
    case 'allow_once':
      return t(kind === 'new_site' ? 'consentAllowedOnce' : 'consentAllowed');
    case 'allow_for_task':
      return kind === 'held_act' ? t('consentAllowedActsForTask', [site]) : t('consentAllowedForTask');
    case 'always':
      return t('consentAllowedAlways', [site]);
    case 'deny':
      return t('consentDenied');
    default:
      return answer;
  }
}

let made = 0;

/**
 * The box for `consent`. With `choose` (the live chat), a button per choice the consent lists,
 * calling `choose(answer)`: the buttons wait while it runs and come back when it resolves to
 * false (the core refused the answer). Without it (a past conversation), no buttons.
 * @param {Consent} consent
 * @param {(answer: string) => Promise<boolean>} [choose]
 */
export function consentBox(consent, choose) {
  const id = `consent-${++made}`;
  const box = el('section', `consent consent-${consent.kind}`);
  box.dataset.consentId = String(consent.id);
  box.dataset.kind = consent.kind;
  box.dataset.site = consent.site;
  box.setAttribute('role', 'alertdialog');
  box.setAttribute('aria-labelledby', `${id}-title`);
  box.setAttribute('aria-describedby', `${id}-act ${id}-why`);
  const title = el('h3', 'consent-title', consentTitle(consent.kind));
  title.id = `${id}-title`;
  const act = el('p', 'consent-act', consentAct(consent));
  act.id = `${id}-act`;
  const why = el('p', 'consent-why', t('consentWhy', [consentReason(consent)]));
  why.id = `${id}-why`;
  box.append(title, act, why);
  if (choose) {
    const choices = el('div', 'consent-choices');
    for (const choice of consent.choices) {
      const button = el('button', choice === 'deny' ? 'consent-choice deny' : 'consent-choice', choiceLabel(consent.kind, choice, consent.site));
      button.type = 'button';
      button.dataset.answer = choice;
      button.addEventListener('click', async () => {
        const all = [...choices.querySelectorAll('button')];
        for (const b of all) b.disabled = true;
        box.dataset.answering = 'true';
        let taken = false;
        try {
          taken = await choose(choice);
        } finally {
          // Refused (or the worker could not be reached): the person can answer again.
          if (!taken && choices.isConnected) {
            for (const b of all) b.disabled = false;
            delete box.dataset.answering;
            button.focus();
          }
        }
      });
      choices.append(button);
    }
    box.append(choices);
  }
  return box;
}

/** Puts the decision in the box in place of its buttons: no longer a question, a record. The
 * person who answered here keeps their place: focus goes to the decision, which is read out. */
export function showDecision(box, answer) {
  const focused = document.activeElement;
  const answeredHere = box.dataset.answering === 'true' && (!focused || focused === document.body || box.contains(focused));
  box.querySelector('.consent-choices')?.remove();
  box.querySelector('.consent-decision')?.remove();
  const { kind, site } = box.dataset;
  const decision = el('p', `consent-decision${answer === 'deny' ? ' denied' : ''}`, decisionText(kind, answer, site));
  box.append(decision);
  box.classList.add('answered');
  box.setAttribute('role', 'group');
  delete box.dataset.answering;
  if (answeredHere) {
    decision.tabIndex = -1;
    decision.focus();
  }
}

/** An unanswered box of a task that ended: its buttons go, and it says no answer came. */
export function showUnanswered(box) {
  if (box.classList.contains('answered')) return;
  box.querySelector('.consent-choices')?.remove();
  box.append(el('p', 'consent-decision unanswered', t('consentUnanswered')));
  box.classList.add('answered');
  box.setAttribute('role', 'group');
}
