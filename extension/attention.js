// Telling the person a task waits for them when the side panel may not be on screen: the task
// asked a question (`ask_human`) or holds an act for their yes (a consent). While it waits the
// toolbar button wears a badge ('?' for a question, '!' for a consent) and says why in its
// tooltip; with no panel open a notification says what is asked, and a click on it opens the
// side panel (or at least brings the window forward). The answer, or the task's end, takes
// both away.
//
// background.js hands every broadcast event here (`noteEvent`), of every task: with several
// running, the signs show the latest wait of any of them, until every wait is answered. A
// scheduled task's wait gets the badge here, and its notification from the core (which names
// the schedule, and shows it whether a panel is open or not: nobody started that task).
//
// The core's own notifications (a schedule's run ended, or waits) are shown here too, in the
// same style (`showNotice`, `clearNotice`); a click on any of them opens the side panel.
// Nothing here may disturb a task: every chrome.* call is caught, and `noteEvent` never throws
// or rejects.
import { t, coreText } from './i18n.js';

const NOTIFICATION = 'tabwright-waiting';
const BADGE = { consent: { text: '!', color: '#c0392b' }, question: { text: '?', color: '#0d8078' } };

/** What the task waits for as the signs show it: the wait's `key` (one wait told from another:
 * a new consent while one is shown replaces it), null for nothing, or undefined in a worker
 * that just started and does not know what an earlier one showed. */
let shownKey;
// Each task's question asked and not yet answered (the task state says only what consent is
// pending), and what each task waits for now, oldest first.
const questions = new Map(); // taskId → {step, text}
const waits = new Map(); // taskId → wait
// The window the person was last in when the notification appeared: where a click opens the
// panel (chrome.sidePanel.open must be called at once in the click, with no await before it).
let windowId = null;
/** The signs' changes under way, in order. */
let changes = Promise.resolve();

/** Calls a chrome.* API that may be missing or fail, with nothing thrown. */
async function quietly(call) {
  try {
    return await call();
  } catch (error) {
    console.warn('Tabwright could not show that a task waits:', error?.message ?? error);
    return undefined;
  }
}

/** What task `taskId` waits for after `event`, with the task state the core sends with it. */
function waitingFor(taskId, event, state) {
  if (event.type === 'question_asked') questions.set(taskId, { step: event.step, text: event.question });
  const over = event.type === 'task_finished' || state?.running === false;
  if (over || event.type === 'question_answered' || event.type === 'task_started') questions.delete(taskId);
  const question = questions.get(taskId);
  const consent = over || event.type === 'consent_answered' ? null
    : (state?.pending_consent ?? (event.type === 'consent_asked' ? event.consent : null));
  const scheduled = state?.scheduled === true;
  if (consent) {
    const act = coreText({ message: consent.act, locale_text: consent.act_locale_text });
    const reason = coreText({ message: consent.reason, locale_text: consent.reason_locale_text });
    return { kind: 'consent', key: `consent ${consent.id} ${consent.act}`, message: `${act}\n${t('consentWhy', [reason])}`, scheduled };
  }
  if (question) return { kind: 'question', key: `question ${question.step} ${question.text}`, message: question.text, scheduled };
  return null;
}

async function show(wait, panelOpen) {
  const badge = BADGE[wait.kind];
  await quietly(() => chrome.action.setBadgeBackgroundColor({ color: badge.color }));
  await quietly(() => chrome.action.setBadgeText({ text: badge.text }));
  await quietly(() => chrome.action.setTitle({ title: t('attentionTitle') }));
  // An open panel shows the question itself; the core notifies a scheduled task's wait.
  if (panelOpen || wait.scheduled) return;
  const focused = await quietly(() => chrome.windows.getLastFocused({ windowTypes: ['normal'] }));
  windowId = focused?.id ?? null;
  await quietly(() => chrome.notifications.create(NOTIFICATION, {
    type: 'basic',
    iconUrl: chrome.runtime.getURL('icons/icon128.png'),
    title: t('attentionTitle'),
    message: wait.message.slice(0, 500),
    contextMessage: t('attentionOpen'),
    requireInteraction: true,
    priority: 2,
  }));
}

async function clear() {
  await quietly(() => chrome.action.setBadgeText({ text: '' }));
  await quietly(() => chrome.action.setTitle({ title: t('actionTitle') }));
  await quietly(() => chrome.notifications.clear(NOTIFICATION));
}

/**
 * Takes one broadcast event of task `taskId` (with where the core says the task stands after
 * it) and shows or takes away the signs that a task waits. `panelOpen`: a side panel is
 * connected, so no notification is needed. Never throws, never rejects.
 * @param {string} taskId
 * @param {{type: string, [key: string]: any}} event
 * @param {any} state
 * @param {boolean} panelOpen
 */
export function noteEvent(taskId, event, state, panelOpen) {
  try {
    const itsWait = waitingFor(taskId, event, state);
    // The newest wait goes last, and is the one shown.
    waits.delete(taskId);
    if (itsWait) waits.set(taskId, { ...itsWait, key: `${taskId} ${itsWait.key}` });
    const wait = [...waits.values()].at(-1) ?? null;
    const key = wait?.key ?? null;
    // Most events (every step) change nothing here: no call at all then.
    if (key === shownKey) return Promise.resolve();
    shownKey = key;
    // One change after the other: a quick answer's clearing never lands before the asking.
    changes = changes.then(() => (wait ? show(wait, panelOpen) : clear())).catch(() => {});
    return changes;
  } catch (error) {
    console.warn('Tabwright could not show that a task waits:', error?.message ?? error);
    return Promise.resolve();
  }
}

/** Opens the side panel in the window the person was in (a click on the notification is a user
 * gesture, which chrome.sidePanel.open needs: it is called first, before any await), or, where
 * Chrome will not, brings that window to the front. */
function openPanel() {
  let opening = null;
  try {
    opening = windowId !== null ? chrome.sidePanel.open({ windowId }) : null;
  } catch {
    opening = null;
  }
  const focus = () => quietly(async () => {
    const id = windowId ?? (await chrome.windows.getLastFocused({ windowTypes: ['normal'] }))?.id;
    if (id !== undefined && id !== null) await chrome.windows.update(id, { focused: true });
  });
  Promise.resolve(opening).then(focus, focus);
  quietly(() => chrome.notifications.clear(NOTIFICATION));
}

/** The core's notifications begin so (src/worker/schedules.rs); a wait's stays until acted on. */
const CORE_NOTICE = 'tabwright-schedule-';
const WAIT_NOTICE = 'tabwright-schedule-waits:';

/**
 * Shows the core's notification `id` in place of one with that id: its title and text are
 * words of the core (`{message, locale_text}`), shown in the person's language. Never rejects.
 * @param {string} id
 * @param {{message: string, locale_text?: any}} title
 * @param {{message: string, locale_text?: any}} message
 */
export async function showNotice(id, title, message) {
  const focused = await quietly(() => chrome.windows.getLastFocused({ windowTypes: ['normal'] }));
  windowId = focused?.id ?? windowId;
  await quietly(() => chrome.notifications.create(id, {
    type: 'basic',
    iconUrl: chrome.runtime.getURL('icons/icon128.png'),
    title: coreText(title).slice(0, 200),
    message: coreText(message).slice(0, 500),
    contextMessage: t('attentionOpen'),
    requireInteraction: id.startsWith(WAIT_NOTICE),
    priority: id.startsWith(WAIT_NOTICE) ? 2 : 0,
  }));
}

/** Takes the core's notification `id` away. Never rejects. */
export async function clearNotice(id) {
  await quietly(() => chrome.notifications.clear(id));
}

// Registered as the worker's file is first evaluated, as every listener must be.
try {
  chrome.notifications?.onClicked.addListener((id) => {
    if (id === NOTIFICATION || id.startsWith(CORE_NOTICE)) {
      openPanel();
      if (id !== NOTIFICATION) clearNotice(id);
    }
  });
} catch (error) {
  console.warn('Tabwright cannot hear clicks on its notifications:', error?.message ?? error);
}
