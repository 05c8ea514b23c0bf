// The side panel: a task box, Run, Pause and Stop, the shown task's steps as they happen
// (chat-view.js), the list of tasks that run and wait (task-list.js), and the history of past
// conversations (history-view.js).
//
// Several tasks may run at once. The chat shows one: the one the person started last, or the
// one working in the tab they look at, or the one they picked in the list; Stop, Pause and
// the answers act on it. The queue is the worker's: a task typed while the shown one works in
// this tab waits there, and starts by itself, panel open or not.
//
// It talks to the core through the service worker: requests with runtime.sendMessage
// ({to: 'core', request}), live events over a port named 'tabwright-panel'. Page and model text
// is only ever inserted with textContent (or sanitized markdown). The history is read from
// IndexedDB directly (written by the worker): this page shares the worker's origin. Every
// string comes from _locales (i18n.js).
import { exportTask, exportFileName, getSession } from '../history-store.js';
import { t, localize, formatNumber } from '../i18n.js';
import { ChatView } from './chat-view.js';
import { el } from '../dom.js';
import { HistoryView, downloadSessionJson, downloadSessionReport, downloadSessionGif } from './history-view.js';
import { download } from '../download.js';
import { askCore as ask } from '../core-client.js';
import { SkillForm } from './skill-form.js';
import { Attachments } from './attachments.js';
import { ModelChoice } from './model-choice.js';
import { showProblem } from './problem-view.js';
import { ReplaySecrets, MASKED } from './replay-secrets.js';
import { Favourites } from './favourites.js';
import { FirstRun, setupNeeded } from './first-run.js';
import { TaskList } from './task-list.js';
import { ClientCards } from './client-card.js';

localize();

/** The panel's element with this id (its controls are inputs, buttons and selects: typed as
 * the input they mostly are). */
const $ = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
const taskBox = $('task');
const runButton = $('run');
const stopButton = $('stop');
const pauseButton = $('pause');
const newTabBox = $('new-tab');
const newConversationButton = $('new-conversation');
const statusPill = $('status');
const notice = $('notice');
// Tasks typed after another one build on it (a follow-up) until the user starts over.
let conversationOpen = false;
// The files attached to the conversation, sent with each of its tasks.
const attachments = new Attachments({
  list: $('attachments'), input: $('attach-input'), button: $('attach'), dropZone: $('composer'), notice: (text) => showNotice(text),
});
// Favourites run as if typed: at once, or queued while a task works in this tab.
const favourites = new Favourites({
  list: $('favourites'), save: /** @type {HTMLButtonElement} */ ($('save-favourite')), taskBox, run: runText, notice: showNotice,
});
favourites.load();
// The model for the next task: the saved one unless the person chose another.
const modelChoice = new ModelChoice({
  row: $('model-row'), select: /** @type {HTMLSelectElement} */ (document.getElementById('model-choice')), note: $('model-list-note'),
});
modelChoice.load();
// The task's pause, as the worker's events tell it: `paused` from task_paused until
// task_resumed (or a start, a restore, the end). `pauseAsked`: Pause was accepted and takes
// effect at the next step or action; Resume takes it back. `resumeAsked`: Resume was accepted
// and task_resumed is on its way. A command's reply never sets what the task is doing: the
// reply and the event come by different ways, in either order.
let paused = false;
let pauseAsked = false;
let resumeAsked = false;
let running = false;

/** Shows a problem above the task box, or clears it (''): the panel's own words, or the
 * core's `{message, locale_text}` (a refusal), shown as every problem is (problem-view.js). */
function showNotice(/** @type {string | {message?: string | null, locale_text?: any}} */ said) {
  const problem = typeof said === 'string' ? { message: said } : said;
  showProblem(notice, problem);
  notice.hidden = !notice.textContent;
}

function setRunning(value, label) {
  running = value;
  stopButton.hidden = !value;
  stopButton.disabled = false;
  pauseButton.hidden = !value;
  showRunLabel();
  newConversationButton.hidden = value || !conversationOpen;
  if (!value) showPause({ paused: false, pauseAsked: false, resumeAsked: false });
  favourites.show(!value);
  statusPill.dataset.state = value ? 'running' : 'idle';
  statusPill.textContent = label ?? t(value ? 'statusRunning' : 'statusIdle');
}

/** Downloads the task's history as JSON, from the same store the worker writes. */
async function downloadExport(taskId, button) {
  button.disabled = true;
  try {
    const data = await exportTask(taskId);
    if (!data) {
      showNotice(t('exportTaskMissing'));
      return;
    }
    download(JSON.stringify(data, null, 2), 'application/json', exportFileName(taskId));
  } catch (error) {
    showNotice(t('exportTaskFailed', [error?.message ?? String(error)]));
  } finally {
    button.disabled = false;
  }
}

/** The task's "Export JSON" button: under its request while it runs, in its final box after. */
function exportControl(taskId) {
  const button = el('button', 'link-button export', t('exportTask'));
  button.type = 'button';
  button.title = t('exportTaskTitle');
  button.dataset.taskId = taskId;
  button.addEventListener('click', () => downloadExport(taskId, button));
  return button;
}

// What the chat last said of the running task (the step it is at, or that it asks), which the
// pill shows unless the task is paused or pausing.
let progress = { label: null, asking: false };
/** The pill's text for the running task. */
const runningLabel = () => (!progress.asking && pauseLabel()) || progress.label || t('statusRunning');

const live = new ChatView($('log'), {
  status(label, isRunning, asking) {
    if (isRunning) {
      progress = { label, asking: Boolean(asking) };
      setRunning(true, runningLabel());
    } else setRunning(false, label ?? undefined);
  },
  async answer(text, taskId) {
    const reply = await ask({ type: 'answer_question', answer: text, task_id: taskId ?? sync.taskId });
    if (reply.type === 'refused') {
      showNotice(reply);
      return false;
    }
    return true;
  },
  // A consent's answer (allow once, for the task, always, deny); the box shows the decision
  // when the worker's consent_answered comes, which every open panel draws alike.
  async consent(id, answer, taskId) {
    const reply = await ask({ type: 'answer_consent', id, answer: /** @type {import('tabwright-types/to-core').ConsentAnswer} */ (answer), task_id: taskId ?? sync.taskId });
    if (reply.type === 'refused') {
      showNotice(reply);
      return false;
    }
    showNotice('');
    return true;
  },
  exportControl,
});

// Scrolling to the end measures the whole log: done in the next frame, once its layout is due
// anyway, and once however many draws came before it, instead of forcing a layout per draw.
let scrollPending = false;
function scrollToEnd() {
  if (scrollPending) return;
  scrollPending = true;
  requestAnimationFrame(() => {
    scrollPending = false;
    const log = $('log');
    log.scrollTop = log.scrollHeight;
  });
}

// Live events are drawn at most every DRAW_EVERY_MS: an event after a quiet moment at once,
// the ones that follow it close behind together. With a fast model a step brings three or four
// events within a few tens of milliseconds, and a frame for each (style, layout, paint, raster)
// takes the CPU from the page being read and the worker, which share this machine and, the
// worker, this process. Ten draws a second look the same to a person. (Step benchmark,
// alternating seven pairs: the median step overhead fell in six, by 3 to 10 ms, and tied in
// one.) Whatever the user does draws what is waiting first, so the controls act on the task as
// shown.
const DRAW_EVERY_MS = 100;
const waiting = [];
let drawTimer = null;
let lastDrawn = -Infinity;

/** Takes one live event to draw, with the controls kept in step with it, at once or in the
 * next draw (see DRAW_EVERY_MS). */
function render(event) {
  waiting.push(event);
  if (drawTimer !== null) return;
  const wait = lastDrawn + DRAW_EVERY_MS - performance.now();
  if (wait <= 0) drawWaiting();
  else drawTimer = setTimeout(drawWaiting, wait);
}

/** Draws every event not drawn yet, in order. */
function drawWaiting() {
  clearTimeout(drawTimer);
  drawTimer = null;
  if (!waiting.length) return;
  lastDrawn = performance.now();
  for (const event of waiting.splice(0)) {
    if (event.type === 'task_paused') showPause({ paused: true, pauseAsked: false });
    if (event.type === 'task_resumed' || event.type === 'task_restored' || event.type === 'task_started') {
      showPause({ paused: false, pauseAsked: false, resumeAsked: false });
    }
    if (event.type === 'task_finished') conversationOpen = true;
    live.render(event);
  }
  scrollToEnd();
}

/** The tab the task should run on: the active tab beside the side panel, or — when this
 * panel is open as a tab itself — the web tab the user was on most recently. */
async function targetTabId() {
  const self = await chrome.tabs.getCurrent();
  if (!self) {
    const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
    return tab?.id ?? null;
  }
  const own = chrome.runtime.getURL('');
  const tabs = (await chrome.tabs.query({})).filter((tab) => tab.id !== self.id && !(tab.url ?? '').startsWith(own));
  tabs.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return tabs[0]?.id ?? null;
}

// The task's length against the longest the core takes (it says which in every status): a
// count appears as the text nears it, and past it Run waits for a shorter text. Nothing typed
// is cut: a pasted text stays whole for the person to shorten.
let taskMaxChars = null;
const taskCount = $('task-count');

/** The typed task's length in characters, and whether it is past the limit. */
function taskLength() {
  const length = [...taskBox.value.trim()].length;
  return { length, over: taskMaxChars !== null && length > taskMaxChars };
}

function showTaskLength(max = taskMaxChars) {
  taskMaxChars = max ?? null;
  const { length, over } = taskLength();
  const near = taskMaxChars !== null && length > taskMaxChars * 0.8;
  taskCount.hidden = !near;
  taskCount.classList.toggle('over', over);
  taskCount.textContent = !near ? ''
    : t(over ? 'taskTooLong' : 'taskLength', [formatNumber(length), formatNumber(taskMaxChars)]);
  taskBox.setAttribute('aria-invalid', String(over));
  runButton.disabled = over || starting;
}

let starting = false;

// The tasks the worker holds (task-list.js): the running ones to switch between, and the
// queue, each queued task with a way to take it back.
const taskList = new TaskList({
  list: $('task-list'),
  queue: $('queue'),
  show: (taskId) => showTask(taskId),
  async cancel(taskId) {
    const reply = await ask({ type: 'stop_task', task_id: taskId });
    if (reply.type === 'refused') showNotice(reply);
    taskBox.focus();
  },
});

// The coding agents asking to use Tabwright (client-card.js).
const clientCards = new ClientCards($('client-cards'));

/** Run says Queue while the shown task works and the next would start in its tab. */
function showRunLabel() {
  runButton.textContent = t(running && !newTabBox.checked ? 'queueTask' : 'run');
}
newTabBox.addEventListener('change', showRunLabel);

/** Runs `text` as if typed (queued while a task works in this tab): a favourite, a suggestion. */
function runText(text) {
  taskBox.value = text;
  showTaskLength();
  startTask();
}

/** Starts the task typed: now, or (the worker decides) queued until a place or its tab frees.
 * A task typed after another continues its conversation. */
async function startTask() {
  drawWaiting();
  const typed = taskBox.value.trim();
  if (starting || !typed || taskLength().over) return;
  starting = true;
  showNotice('');
  runButton.disabled = true;
  try {
    const tabId = await targetTabId();
    // Typed while the shown task runs in this tab, it follows that task up (and waits for its
    // end); in another tab or a new one, it is a task of its own, run beside it. Typed once
    // the shown task is over, it follows up the conversation unless a new one was started.
    const shownTabs = taskList.find(sync.taskId)?.tabs ?? [];
    const followUp = running ? !newTabBox.checked && shownTabs.includes(tabId) : conversationOpen;
    const reply = await ask({
      type: 'start_task', task: typed, tab_id: tabId, start_url: null, follow_up: followUp,
      follows: followUp ? sync.taskId : null,
      new_tab: newTabBox.checked, files: attachments.forTask(), model: modelChoice.chosen(),
    });
    if (reply.type === 'refused') {
      showNotice(reply);
      return;
    }
    if (reply.type === 'task_accepted') {
      // A task that starts now is shown at once (its first event may be here already): below
      // the conversation it continues, or in a chat of its own beside a running one.
      if (!reply.queued && reply.task_id !== sync.taskId) showTask(reply.task_id, { below: followUp || !running });
    }
    taskBox.value = '';
  } catch (error) {
    showNotice(t('startFailed', [error?.message ?? String(error)]));
  } finally {
    starting = false;
    showTaskLength();
  }
}

/** What the pill says of the pause, if anything. */
function pauseLabel() {
  if (paused && !resumeAsked) return t('statusPaused');
  if (pauseAsked) return t('statusPausing');
  return null;
}

/** Takes the pause state as changed and shows it: the button offers Resume while the task is
 * paused or pausing, and waits while a resume is on its way. */
function showPause(change) {
  ({ paused = paused, pauseAsked = pauseAsked, resumeAsked = resumeAsked } = change);
  const resumes = (paused && !resumeAsked) || pauseAsked;
  pauseButton.textContent = t(resumes ? 'resume' : 'pause');
  pauseButton.disabled = resumeAsked;
  if (running) statusPill.textContent = runningLabel();
}

/** Pause takes effect at the next step or action (nothing is cut in half); resume at once,
 * and takes back a pause that has not taken effect yet. */
async function pauseOrResume() {
  drawWaiting();
  const resuming = paused || pauseAsked;
  pauseButton.disabled = true;
  const reply = await ask({ type: resuming ? 'resume_task' : 'pause_task', task_id: sync.taskId });
  drawWaiting();
  if (reply.type === 'refused') {
    showNotice(reply);
    showPause({});
    return;
  }
  if (!resuming) showPause({ pauseAsked: !paused });
  // A pause that had taken effect ends with task_resumed; one that had not, here.
  else showPause({ pauseAsked: false, resumeAsked: paused });
}

async function stopTask() {
  drawWaiting();
  stopButton.disabled = true;
  const reply = await ask({ type: 'stop_task', task_id: sync.taskId });
  if (reply.type === 'refused') {
    showNotice(reply);
    stopButton.disabled = false;
  }
}

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  startTask();
});
taskBox.addEventListener('input', () => {
  showTaskLength();
  favourites.follow();
});
taskBox.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    startTask();
  }
});
stopButton.addEventListener('click', stopTask);
pauseButton.addEventListener('click', pauseOrResume);
newConversationButton.addEventListener('click', () => {
  drawWaiting();
  conversationOpen = false;
  newConversationButton.hidden = true;
  attachments.clear();
  live.reset();
  $('log').replaceChildren(el('p', 'empty', t('newConversationNote')));
});

// Views: the chat (the running or last task), the history list, and a past conversation. The
// chat keeps following its task while another view is shown.
const views = { chat: $('chat-view'), history: $('history-view'), past: $('past-view'), setup: $('setup-view') };
function showView(name) {
  for (const [key, view] of Object.entries(views)) view.hidden = key !== name;
  document.body.dataset.view = name;
  $('show-history').setAttribute('aria-pressed', String(name === 'history' || name === 'past'));
}

const historyList = new HistoryView(views.history, { open: openPast, notice: showNotice });

// With no model configured, the panel opens on the setup (first-run.js), then the chat.
const firstRun = new FirstRun(views.setup, {
  done() {
    showView('chat');
    taskBox.focus();
  },
});
setupNeeded().then((needed) => {
  if (!needed) return;
  showView('setup');
  firstRun.show();
});
// A model saved meanwhile (on the options page) ends the setup.
chrome.storage.onChanged.addListener(async (changes, area) => {
  if (area === 'local' && 'settings' in changes && document.body.dataset.view === 'setup' && !(await setupNeeded())) {
    views.setup.replaceChildren();
    showView('chat');
  }
});
// Suggested tasks, for an empty chat: they work on whatever page is open.
for (const suggestion of document.querySelectorAll('#suggestions .suggestion')) {
  suggestion.addEventListener('click', () => runText(suggestion.textContent));
}
const skillForm = new SkillForm($('skill-form'));
const replaySecrets = new ReplaySecrets($('replay-secrets'));
let pastId = null;
let pastTasks = [];

async function openPast(conversationId) {
  showNotice('');
  let tasks;
  try {
    tasks = await getSession(conversationId);
  } catch (error) {
    showNotice(t('historyActionFailed', [error?.message ?? String(error)]));
    return;
  }
  pastId = conversationId;
  pastTasks = tasks;
  skillForm.close();
  const log = $('past-log');
  log.replaceChildren();
  const view = new ChatView(log);
  for (const kept of tasks) view.renderPast(kept);
  showView('past');
  views.past.scrollTop = 0;
}

async function pastExport(action) {
  try {
    await action(pastId);
  } catch (error) {
    showNotice(t('historyActionFailed', [error?.message ?? String(error)]));
  }
}

$('show-history').addEventListener('click', () => {
  if (document.body.dataset.view === 'chat') {
    showView('history');
    historyList.show();
    /** @type {HTMLElement} */ (views.history.querySelector('.history-search')).focus();
  } else {
    showView('chat');
  }
});
$('history-back').addEventListener('click', () => showView('chat'));
$('past-back').addEventListener('click', () => {
  showView('history');
  historyList.show();
});
$('past-json').addEventListener('click', () => pastExport(downloadSessionJson));
$('past-report').addEventListener('click', () => pastExport(downloadSessionReport));
$('past-gif').addEventListener('click', () => pastExport(downloadSessionGif));
$('past-replay').addEventListener('click', replayPast);
$('past-skill').addEventListener('click', async () => {
  showNotice('');
  const steps = await withSecretsForPasswords(replaySteps(pastTasks));
  if (!steps) return;
  skillForm.open({ title: pastTasks[0]?.task?.task ?? '', startUrl: pastStartUrl(pastTasks) ?? '', steps });
});

/** `steps` (each with its `site`) ready to run again: a password typed as itself, which the
 * history never kept, asked for once and kept as a secret for its site (replay-secrets.js),
 * then typed as that secret. Without `site`; null when the person cancels. */
async function withSecretsForPasswords(steps) {
  const typed = (step) => step.actions.filter((a) => a.name === 'input' && a.params?.text === MASKED);
  const sites = [...new Set(steps.filter((step) => typed(step).length).map((step) => step.site))];
  if (sites.length) {
    const names = await replaySecrets.ask(sites);
    if (!names) return null;
    for (const step of steps) {
      for (const action of typed(step)) action.params = { ...action.params, text: `<secret>${names.get(step.site)}</secret>` };
    }
  }
  return steps.map(({ site: _site, ...step }) => step);
}

/** A conversation's steps as a replay takes them: each step's goal and the actions that
 * worked, with the element each acted on. `done` is left out (the replay reports instead), and
 * so is the call of a skill: the steps it ran follow it in the conversation. */
function replaySteps(tasks) {
  const steps = [];
  for (const { steps: records } of tasks) {
    for (const record of records) {
      const actions = (record.actions ?? [])
        .filter((a) => a.name !== 'done' && !a.name.startsWith('skill_') && !a.result?.is_error)
        .map((a) => ({ name: a.name, params: a.params, target: a.target ?? null }));
      if (actions.length) steps.push({ goal: record.output?.next_goal ?? '', actions, site: siteOf(record.url) });
    }
  }
  return steps;
}

/** The host of a step's page ('' when it has none). */
function siteOf(url) {
  try {
    return new URL(url ?? '').hostname;
  } catch {
    return '';
  }
}

/** The web page a conversation's first step was taken on. */
function pastStartUrl(tasks) {
  return tasks.flatMap((kept) => kept.steps).find((record) => /^https?:/.test(record.url ?? ''))?.url;
}

/** Runs the opened conversation's steps again without the model, in a new tab at the page it
 * began on, and shows it live in the chat. */
async function replayPast() {
  showNotice('');
  const steps = replaySteps(pastTasks);
  const startUrl = pastStartUrl(pastTasks);
  if (!steps.length || !startUrl) {
    showNotice(t('replayNothing'));
    return;
  }
  const ready = await withSecretsForPasswords(steps);
  if (!ready) return;
  const title = t('replayTitle', [pastTasks[0].task.task]);
  const reply = await ask({ type: 'replay_task', title, start_url: startUrl, steps: ready });
  if (reply.type === 'refused') {
    showNotice(reply);
    return;
  }
  if (reply.type === 'task_accepted') {
    if (!reply.queued) showTask(reply.task_id, { below: true });
  }
  showView('chat');
}

// Keeping in step with the worker. Every event comes with its task id and its position (seq) in
// that task's log; `get_status` returns the log from the first event the panel lacks. The panel
// renders each event of the shown task once, in order: repeats are skipped, and a gap triggers
// a resync. Another task's events are not drawn (the list of tasks says how it goes), except
// the start of one this panel started, which the chat then follows while the shown one is
// over. The port drops whenever Chrome stops the idle worker; the panel reconnects and resyncs.
// `over`: the shown task's end was taken in (drawn or about to be). `shown` counts the times
// another task was chosen for the chat: a resync asked before that is not taken.
const sync = { taskId: null, next: 0, syncing: null, held: [], over: false, shown: 0 };

/** Shows task `taskId` in the chat: `below` the tasks shown (one the person started here, as
 * the chat has always gone on until New conversation), else in a chat of its own (a task
 * picked in the list, or the one of the tab brought to the front). */
function showTask(taskId, { below = false } = {}) {
  if (taskId === sync.taskId) return;
  drawWaiting();
  if (!below) {
    live.reset();
    $('log').replaceChildren();
    conversationOpen = false;
  }
  sync.taskId = taskId;
  live.taskId = taskId;
  sync.next = 0;
  sync.over = false;
  sync.shown += 1;
  taskList.update(undefined, taskId);
  setRunning(false);
  // A resync under way was for the task shown before: this one follows it.
  if (sync.syncing) sync.syncing.then(() => resync());
  else resync();
}

function accept(taskId, seq, event) {
  if (sync.syncing) {
    sync.held.push({ taskId, seq, event });
    return;
  }
  if (taskId !== sync.taskId) {
    // A task that starts while the shown one is over goes on in the chat below it, as a typed
    // one always has (started here, by a schedule, or elsewhere); one that starts while the
    // shown one runs is in the list of tasks.
    const follow = sync.taskId === null || sync.over;
    if (!follow || event.type !== 'task_started' || seq !== 0) return;
    sync.taskId = taskId;
    live.taskId = taskId;
    sync.next = 0;
    taskList.update(undefined, taskId);
  }
  if (event.type === 'task_started') sync.over = false;
  if (event.type === 'task_finished') sync.over = true;
  // A restarted worker rewrites the log from its last saved point on: take its word.
  if (event.type === 'task_restored' && seq < sync.next) sync.next = seq;
  if (seq < sync.next) return;
  if (seq > sync.next) {
    resync();
    return;
  }
  render(event);
  sync.next += 1;
}

function resync() {
  if (sync.syncing) return sync.syncing;
  sync.syncing = (async () => {
    const asked = sync.taskId;
    const shown = sync.shown;
    const status = await ask({ type: 'get_status', task_id: sync.taskId, since: sync.next });
    if (shown !== sync.shown) {
      // Another task was chosen meanwhile: this answer is not for the chat (showTask asks
      // again for the one chosen); the events held are looked at then.
      const held = sync.held;
      sync.syncing = null;
      sync.held = [];
      for (const h of held) accept(h.taskId, h.seq, h.event);
      return;
    }
    if (status.type === 'status') {
      showTaskLength(status.task_max_chars);
      clientCards.update(status.clients_asking ?? []);
      // A task the worker no longer holds: show the one it shows first.
      if (asked !== null && status.task_id !== asked) {
        live.reset();
        $('log').replaceChildren();
      }
    }
    if (status.type === 'status' && status.task_id) {
      if (status.task_id !== sync.taskId) {
        sync.taskId = status.task_id;
        sync.next = 0;
      }
      live.taskId = sync.taskId;
      sync.over = !status.running;
      // A worker Chrome restarted keeps the task's log as last saved, which may end before
      // what this panel already showed (a step that was under way): go on from its log.
      if (status.from < sync.next) sync.next = status.from;
      status.events.forEach((event, i) => {
        if (status.from + i >= sync.next) render(event);
      });
      drawWaiting();
      // A consent the task waits for is shown with its buttons, even when the log the panel
      // was sent no longer holds the event that asked it.
      if (status.state?.pending_consent) live.showPendingConsent(status.state.pending_consent);
      sync.next = Math.max(sync.next, status.from + status.events.length);
      if (!status.running && running) setRunning(false);
      taskList.update(status.tasks, sync.taskId);
    } else if (status.type === 'refused') {
      showNotice(status);
    }
    const held = sync.held;
    sync.syncing = null;
    sync.held = [];
    for (const h of held) accept(h.taskId, h.seq, h.event);
  })();
  return sync.syncing;
}

let reconnectDelay = 250;
function connect() {
  const port = chrome.runtime.connect({ name: 'tabwright-panel' });
  port.onMessage.addListener((message) => {
    reconnectDelay = 250;
    if (message?.crashed) {
      drawWaiting();
      showNotice(message.crashed);
      setRunning(false, t('statusError'));
      return;
    }
    if (message?.event) accept(message.task_id, message.seq, message.event);
    if (Array.isArray(message?.tasks)) taskList.update(message.tasks, sync.taskId);
    if (Array.isArray(message?.clients_asking)) clientCards.update(message.clients_asking);
  });
  port.onDisconnect.addListener(() => {
    setTimeout(() => {
      connect();
      resync();
    }, reconnectDelay);
    reconnectDelay = Math.min(reconnectDelay * 2, 5_000);
  });
}

connect();
resync().then(showTaskOfActiveTab);

/** Shows the task working in the tab the person looks at, if one does (and another is shown),
 * unless the shown one waits for the person: their answer box stays in front of them. */
async function showTaskOfActiveTab() {
  const tabId = await targetTabId().catch(() => null);
  const task = tabId === null ? null : taskList.inTab(tabId);
  if (!task || task.task_id === sync.taskId) return;
  if (taskList.find(sync.taskId)?.status === 'waiting') return;
  showTask(task.task_id);
}
// The window this side panel belongs to: a tab brought to the front in another window (where
// another panel may be open) is not this one's business. (Opened as a tab of its own, the
// panel follows the person's tabs in every window, as `targetTabId` does.)
const ownWindow = chrome.tabs.getCurrent()
  .then((self) => (self ? null : chrome.windows.getCurrent().then((w) => w.id)))
  .catch(() => null);
chrome.tabs.onActivated.addListener(async ({ windowId }) => {
  const own = await ownWindow;
  if (own !== null && windowId !== own) return;
  showTaskOfActiveTab();
});
