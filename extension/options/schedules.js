// The options page's schedules: the list (what each runs, when, its next run in local time,
// how its last run went, whether it is paused) with Pause/Resume, Run now and Remove, and the
// form that adds one. A schedule runs a task typed here, one of the favourites the side panel
// keeps (favourites.js: `favourites` in chrome.storage.local), or a saved skill with its
// parameters. Every decision is the core's (src/schedule, src/worker/schedules.rs): the page
// sends the draft, and shows a refusal beside the field it is about. The list is asked of the
// core only when something is stored, so opening the page starts no worker for nothing.
// Titles, tasks and summaries came from people, pages and the model: textContent only.
import { t, coreText, formatTime } from '../i18n.js';
import { el, onSecondClick } from '../dom.js';
import { askCore } from '../core-client.js';
import { blanksOf, fillBlanks } from '../panel/favourites.js';

/** @typedef {import('tabwright-types/from-core').Schedule} Schedule */
/** @typedef {import('tabwright-types/from-core').PanelReply} PanelReply */
/** @typedef {import('tabwright-types/to-core').ScheduleDraft} ScheduleDraft */

/** Where the core keeps the schedules, the side panel the favourites, the core the skills. */
const SCHEDULES_KEY = 'schedules';
const FAVOURITES_KEY = 'favourites';
const SKILLS_KEY = 'skills';

/** The form's field with this id. */
const field = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

// The refusals of the core (`core_schedule_…`, src/schedule/mod.rs) by the field they are about;
// any other is said in the form's status line.
const ERROR_FIELDS = {
  schedule_no_title: 'title', schedule_title_too_long: 'title',
  schedule_bad_time: 'when', schedule_minutes_out_of_range: 'when', schedule_minute_out_of_range: 'when',
  schedule_no_task: 'what', schedule_bad_start_url: 'what', schedule_no_steps: 'what', schedule_no_skill: 'what',
  schedule_skill_param_not_text: 'what', schedule_no_such_skill: 'what', schedule_skill_param_missing: 'what',
  schedule_skill_param_unknown: 'what', schedule_bad_steps: 'what',
};
// The fields each place of error marks.
const MARKED = {
  title: ['schedule-title'],
  what: ['schedule-task', 'schedule-favourite', 'schedule-start-url', 'schedule-skill'],
  when: ['schedule-minutes', 'schedule-minute', 'schedule-at'],
};

/** The favourites and skills the form offers, as last read. */
let favourites = [];
let skills = [];

/** Fills the schedules section `section`: its list, kept current, and its form. */
export function showSchedules(section) {
  const list = /** @type {HTMLElement} */ (section.querySelector('#schedules'));
  const problem = /** @type {HTMLElement} */ (section.querySelector('#schedules-problem'));
  const render = (/** @type {PanelReply} */ reply) => {
    if (reply.type !== 'schedules') {
      problem.textContent = coreText(reply) || t('workerNoAnswer');
      return;
    }
    problem.textContent = reply.left_out.length ? t('optSchedulesLeftOut', [reply.left_out.length, reply.left_out.join(' ')]) : '';
    list.replaceChildren();
    if (!reply.schedules.length) list.append(el('li', 'empty', t('optSchedulesNone')));
    for (const schedule of reply.schedules) list.append(scheduleRow(schedule, render));
  };
  const load = async () => {
    const { [SCHEDULES_KEY]: stored } = await chrome.storage.local.get(SCHEDULES_KEY);
    if (Array.isArray(stored) && stored.length) render(await askCore({ type: 'list_schedules' }));
    else render({ type: 'schedules', v: 1, schedules: [], left_out: [] });
  };
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area !== 'local') return;
    if (SCHEDULES_KEY in changes) load();
    if (FAVOURITES_KEY in changes || SKILLS_KEY in changes) offerSaved();
  });
  setUpForm(render);
  offerSaved();
  return load();
}

/** The "when" of a schedule, as a person says it. */
function whenText(when) {
  switch (when.every) {
    case 'minutes': return t('optScheduleEveryN', [when.n]);
    case 'hourly': return t('optScheduleEveryHour', [String(when.minute).padStart(2, '0')]);
    case 'daily': return t('optScheduleEveryDay', [when.at]);
    case 'weekdays': return t('optScheduleEveryWeekday', [when.at]);
    default: return '';
  }
}

/** What a schedule runs, as a person says it. */
function whatText(what) {
  switch (what.kind) {
    case 'task': return what.start_url ? t('optScheduleWhatTaskAt', [what.task, what.start_url]) : t('optScheduleWhatTaskIs', [what.task]);
    case 'replay': return t('optScheduleWhatReplayIs', [what.steps.length, what.start_url]);
    case 'skill': return t('optScheduleWhatSkillIs', [what.name]);
    default: return '';
  }
}

/** Where a schedule stands: paused, a run under way, its next run. */
function stateText(/** @type {Schedule} */ schedule) {
  const parts = [];
  if (schedule.paused) parts.push(t('optSchedulePausedState'));
  else if (typeof schedule.next_run_ms === 'number') parts.push(t('optScheduleNext', [formatTime(schedule.next_run_ms)]));
  if (schedule.run_task_id) parts.push(t('optScheduleRunning'));
  return parts.join(' · ');
}

/** How its last run went. */
function lastText(/** @type {Schedule} */ schedule) {
  const last = schedule.last_result;
  if (!last) return t('optScheduleNeverRun');
  const summary = coreText({ message: last.summary, locale_text: last.summary_locale_text });
  return t(last.ok ? 'optScheduleLastOk' : 'optScheduleLastFailed', [formatTime(last.at_ms), summary]);
}

/** One schedule of the list, with its buttons; `render` shows the list the core answers. */
function scheduleRow(/** @type {Schedule} */ schedule, render) {
  const row = el('li', 'schedule');
  row.dataset.id = schedule.id;
  const titleId = `schedule-${schedule.id}-title`;
  const title = el('strong', 'schedule-title', schedule.title);
  title.id = titleId;
  const what = el('div', 'schedule-what');
  const last = el('span', `schedule-meta schedule-last${schedule.last_result && !schedule.last_result.ok ? ' failed' : ''}`, lastText(schedule));
  what.append(
    title,
    el('span', 'schedule-meta', whatText(schedule.what)),
    el('span', 'schedule-meta schedule-when', `${whenText(schedule.when)} · ${stateText(schedule)}`),
    last,
  );
  const buttons = el('div', 'schedule-actions');
  const status = el('span', 'row-status');
  status.setAttribute('role', 'status');
  /** Asks the core, then shows the list it answers, or its refusal beside the buttons. */
  const act = async (button, request) => {
    button.disabled = true;
    const reply = await askCore(request);
    button.disabled = false;
    if (reply.type === 'schedules') render(reply);
    else {
      status.className = 'row-status error';
      status.textContent = coreText(reply) || t('workerNoAnswer');
    }
  };
  const button = (label, className = 'secondary') => {
    const b = el('button', className, t(label));
    b.type = 'button';
    b.setAttribute('aria-describedby', titleId);
    buttons.append(b);
    return b;
  };
  const pause = button(schedule.paused ? 'optScheduleResume' : 'optSchedulePause');
  pause.classList.add('schedule-pause');
  pause.addEventListener('click', () => act(pause, { type: 'pause_schedule', id: schedule.id, paused: !schedule.paused }));
  const runNow = button('optScheduleRunNow');
  runNow.classList.add('schedule-run-now');
  runNow.disabled = Boolean(schedule.run_task_id);
  runNow.addEventListener('click', () => act(runNow, { type: 'run_schedule_now', id: schedule.id }));
  const remove = button('optScheduleRemove', 'secondary danger-button');
  remove.classList.add('schedule-remove');
  onSecondClick(remove, t('optScheduleRemoveConfirm'), () => act(remove, { type: 'remove_schedule', id: schedule.id }));
  buttons.append(status);
  row.append(what, buttons);
  return row;
}

/** Reads the favourites and skills, and offers them in the form. */
async function offerSaved() {
  const stored = await chrome.storage.local.get([FAVOURITES_KEY, SKILLS_KEY]);
  favourites = (Array.isArray(stored[FAVOURITES_KEY]) ? stored[FAVOURITES_KEY] : []).filter((f) => typeof f?.text === 'string');
  skills = (Array.isArray(stored[SKILLS_KEY]) ? stored[SKILLS_KEY] : []).filter((s) => typeof s?.name === 'string');
  const favourite = /** @type {HTMLSelectElement} */ (document.getElementById('schedule-favourite'));
  const chosenFavourite = favourite.value;
  favourite.replaceChildren(...(favourites.length
    ? favourites.map((f, i) => Object.assign(el('option', null, f.text.slice(0, 120)), { value: String(i) }))
    : [Object.assign(el('option', null, t('optScheduleNoFavourites')), { value: '' })]));
  if ([...favourite.options].some((o) => o.value === chosenFavourite)) favourite.value = chosenFavourite;
  const skill = /** @type {HTMLSelectElement} */ (document.getElementById('schedule-skill'));
  const chosenSkill = skill.value;
  skill.replaceChildren(...(skills.length
    ? skills.map((s, i) => Object.assign(el('option', null, t('optScheduleSkillOption', [s.name, String(s.domain ?? '')])), { value: String(i) }))
    : [Object.assign(el('option', null, t('optScheduleNoSkills')), { value: '' })]));
  if ([...skill.options].some((o) => o.value === chosenSkill)) skill.value = chosenSkill;
  showBlanks();
  showSkillParams();
}

/** A labelled text field for one blank or parameter, inside `box`. */
function textField(box, id, label, value, dataName) {
  const labelled = el('label', null, label);
  labelled.htmlFor = id;
  const input = el('input');
  input.type = 'text';
  input.id = id;
  input.value = value;
  input.autocomplete = 'off';
  input.dataset.name = dataName;
  box.append(labelled, input);
}

/** The chosen favourite's blanks, each a field. */
function showBlanks() {
  const box = document.getElementById('schedule-blanks');
  box.replaceChildren();
  const chosen = favourites[Number(field('schedule-favourite').value)];
  blanksOf(chosen?.text ?? '').forEach((name, i) => textField(box, `schedule-blank-${i}`, t('optScheduleBlank', [name]), '', name));
}

/** The chosen skill's parameters, each a field holding its example. */
function showSkillParams() {
  const box = document.getElementById('schedule-skill-params');
  box.replaceChildren();
  const chosen = skills[Number(field('schedule-skill').value)];
  (chosen?.params ?? []).forEach((param, i) => {
    textField(box, `schedule-param-${i}`, t('optScheduleSkillParam', [param.name]), String(param.example ?? ''), param.name);
  });
}

/** The rows of the form that the chosen "what" and "when" need. */
function showChosenRows() {
  const what = field('schedule-what').value;
  field('schedule-task-row').hidden = what !== 'task';
  field('schedule-favourite-row').hidden = what !== 'favourite';
  field('schedule-start-row').hidden = what === 'skill';
  field('schedule-skill-row').hidden = what !== 'skill';
  const when = field('schedule-when').value;
  field('schedule-minutes-row').hidden = when !== 'minutes';
  field('schedule-minute-row').hidden = when !== 'hourly';
  field('schedule-at-row').hidden = !['daily', 'weekdays'].includes(when);
}

/** The values of the text fields inside `box`, by name. */
function valuesIn(box) {
  return new Map([...box.querySelectorAll('input')].map((input) => [input.dataset.name, input.value.trim()]));
}

/** The draft the form holds, as the core reads it.
 * @returns {ScheduleDraft} */
function draftOfForm() {
  const what = field('schedule-what').value;
  const startUrl = field('schedule-start-url').value.trim();
  let work;
  if (what === 'skill') {
    const chosen = skills[Number(field('schedule-skill').value)];
    work = { kind: 'skill', name: chosen?.name ?? '', params: Object.fromEntries(valuesIn(document.getElementById('schedule-skill-params'))) };
  } else {
    const chosen = favourites[Number(field('schedule-favourite').value)];
    const task = what === 'favourite'
      ? fillBlanks(chosen?.text ?? '', valuesIn(document.getElementById('schedule-blanks')))
      : field('schedule-task').value;
    work = { kind: 'task', task, ...(startUrl ? { start_url: startUrl } : {}) };
  }
  const every = field('schedule-when').value;
  // A whole number the core's types hold (an empty field is 0): the core says what range it
  // takes, beside the field.
  const number = (id, largest) => Math.min(Math.max(Math.trunc(Number(field(id).value) || 0), 0), largest);
  const when = every === 'minutes' ? { every, n: number('schedule-minutes', 2 ** 32 - 1) }
    : every === 'hourly' ? { every, minute: number('schedule-minute', 255) }
      : { every, at: field('schedule-at').value };
  return /** @type {ScheduleDraft} */ ({ title: field('schedule-title').value, what: work, when, notify_success: field('schedule-notify').checked });
}

/** Takes the marks and messages of the last refusal away. */
function clearErrors() {
  for (const place of Object.keys(MARKED)) {
    field(`schedule-${place}-error`).textContent = '';
    for (const id of MARKED[place]) field(id).removeAttribute('aria-invalid');
  }
  const status = field('schedule-status');
  status.className = '';
  status.textContent = '';
}

/** Shows a refusal of the core beside the field it is about (or in the status line). */
function showRefusal(reply) {
  const message = coreText(reply) || t('workerNoAnswer');
  const place = ERROR_FIELDS[reply.locale_text?.key];
  if (!place) {
    field('schedule-status').className = 'error';
    field('schedule-status').textContent = message;
    return;
  }
  field(`schedule-${place}-error`).textContent = message;
  const shown = MARKED[place].map(field).filter((input) => input.closest('[hidden]') === null);
  for (const input of shown) input.setAttribute('aria-invalid', 'true');
  shown[0]?.focus();
}

function setUpForm(render) {
  const form = /** @type {HTMLFormElement} */ (document.getElementById('schedule-form'));
  field('schedule-what').addEventListener('change', showChosenRows);
  field('schedule-when').addEventListener('change', showChosenRows);
  field('schedule-favourite').addEventListener('change', showBlanks);
  field('schedule-skill').addEventListener('change', showSkillParams);
  form.addEventListener('input', (event) => {
    /** @type {Element} */ (event.target).removeAttribute?.('aria-invalid');
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const save = field('schedule-save');
    save.disabled = true;
    const draft = draftOfForm();
    const reply = await askCore({ type: 'save_schedule', draft });
    save.disabled = false;
    if (reply.type !== 'schedules') {
      showRefusal(reply);
      return;
    }
    render(reply);
    field('schedule-status').textContent = t('optScheduleAdded', [draft.title.trim()]);
    for (const id of ['schedule-title', 'schedule-task', 'schedule-start-url']) field(id).value = '';
    showBlanks();
    showSkillParams();
  });
  showChosenRows();
}
