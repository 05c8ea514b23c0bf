// The side panel: a task box, Run and Stop, and each step of the running task as it happens.
//
// It talks to the core through the service worker: requests with runtime.sendMessage
// ({to: 'core', request}), live events over a port named 'tabwright-panel'. Page and model text
// is only ever inserted with textContent. Exports read the task history (IndexedDB, written by
// the worker) directly: this page shares the worker's origin.
import { exportTask, exportFileName } from '../history-store.js';
import { markdownFragment } from './markdown-view.js';

const PROTOCOL_VERSION = 1;
/** A string from _locales (new strings live there). */
const t = (name, substitutions) => chrome.i18n.getMessage(name, substitutions) || name;
const $ = (id) => document.getElementById(id);
const log = $('log');
const taskBox = $('task');
const runButton = $('run');
const stopButton = $('stop');
const pauseButton = $('pause');
const newConversationButton = $('new-conversation');
// Tasks typed after another one build on it (a follow-up) until the user starts over.
let conversationOpen = false;
// Whether the running task is paused (or asked to pause); the pause button then resumes.
let paused = false;
const statusPill = $('status');
const notice = $('notice');

let running = false;
let maxSteps = 0;
// What the task has used so far, shown beside the step it is at.
let used = { tokens: 0, cost: null };
const stepCards = new Map(); // step number → card element

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function showNotice(message) {
  notice.textContent = message;
  notice.hidden = !message;
  // Problems the user fixes in settings get a way there.
  if (/options/i.test(message)) {
    const open = el('button', 'link-button', 'Open settings');
    open.type = 'button';
    open.addEventListener('click', () => chrome.runtime.openOptionsPage());
    notice.append(document.createElement('br'), open);
  }
}

function setRunning(value, label) {
  running = value;
  runButton.hidden = value;
  stopButton.hidden = !value;
  stopButton.disabled = false;
  pauseButton.hidden = !value;
  newConversationButton.hidden = value || !conversationOpen;
  if (!value) showPaused(false);
  statusPill.dataset.state = value ? 'running' : 'idle';
  statusPill.textContent = label ?? (value ? 'Running' : 'Idle');
}

function scrollToEnd() {
  log.scrollTop = log.scrollHeight;
}

function stepCard(step) {
  let card = stepCards.get(step);
  if (!card) {
    card = el('section', 'step');
    card.dataset.step = String(step);
    const head = el('div', 'step-head');
    head.append(el('span', 'step-number', `Step ${step}${maxSteps ? ` of ${maxSteps}` : ''}`), el('span', 'step-time'));
    card.append(head, el('p', 'goal thinking', 'Looking at the page…'));
    stepCards.set(step, card);
    log.append(card);
  }
  return card;
}

function showGoal(card, text) {
  const goal = card.querySelector('.goal');
  goal.textContent = text;
  goal.classList.remove('thinking');
  return goal;
}

function renderActions(card, actions) {
  card.querySelector('.actions')?.remove();
  const list = el('ul', 'actions');
  for (const action of actions) {
    const item = el('li', 'action');
    item.append(el('code', '', action.description));
    if (action.result) {
      item.classList.toggle('error', Boolean(action.result.is_error));
      item.append(el('span', 'result', `${action.result.is_error ? '✗' : '✓'} ${action.result.message}`));
    }
    list.append(item);
  }
  card.append(list);
}

/** The agent's question, with a box for the answer; the task waits until it is sent. */
function renderQuestion(card, question) {
  card.querySelector('.question')?.remove();
  const box = el('section', 'question');
  box.append(el('p', 'question-text', question));
  const form = el('form', 'answer-form');
  const input = el('textarea', 'answer-box');
  input.rows = 2;
  input.placeholder = 'Your answer (Enter to send)';
  input.setAttribute('aria-label', 'Answer');
  const send = el('button', 'primary', 'Answer');
  send.type = 'submit';
  form.append(input, send);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const answer = input.value.trim();
    if (!answer) return;
    send.disabled = true;
    const reply = await ask({ type: 'answer_question', answer });
    if (reply.type === 'refused') {
      showNotice(reply.message);
      send.disabled = false;
    }
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  box.append(form);
  card.append(box);
  input.focus();
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
    const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
    const link = el('a');
    link.href = url;
    link.download = exportFileName(taskId);
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // The download has its own copy by then; the page may stay open long.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  } catch (error) {
    showNotice(t('exportTaskFailed', [error?.message ?? String(error)]));
  } finally {
    button.disabled = false;
  }
}

/** The task's "Export JSON" button: under its request while it runs, in its final box after. */
let exportButton = null;

function exportControl(taskId) {
  const button = el('button', 'link-button export', t('exportTask'));
  button.type = 'button';
  button.title = t('exportTaskTitle');
  button.dataset.taskId = taskId;
  button.addEventListener('click', () => downloadExport(taskId, button));
  return button;
}

/** "4 steps · 12,345 tokens · $0.0123": what the task used. */
function usageLine(finished) {
  const tokens = (finished.usage?.input_tokens ?? 0) + (finished.usage?.output_tokens ?? 0);
  const parts = [`${finished.steps} step${finished.steps === 1 ? '' : 's'}`, `${tokens.toLocaleString('en-US')} tokens`];
  if (typeof finished.cost_usd === 'number') parts.push(`$${finished.cost_usd.toFixed(4)}`);
  return parts.join(' · ');
}

function renderFinal(end, finished) {
  const done = end.kind === 'done';
  const success = done && end.success;
  const box = el('section', `final${success ? '' : ' failed'}`);
  const label = done ? (success ? 'Done' : 'Finished without success')
    : end.kind === 'stopped' ? 'Stopped' : 'Task ended';
  box.append(el('span', 'label', label));
  const text = done ? end.text : end.kind === 'stopped' ? 'You stopped the task.'
    : end.kind === 'step_limit' ? `Used all ${end.max_steps} steps without finishing.`
    : end.kind === 'too_many_failures' ? `Stopped after ${end.failures} failed steps in a row. ${end.last_error}`
    : end.message;
  // The model's answer is markdown, shown formatted (and sanitized, see markdown-view.js); the
  // panel's own messages are plain text.
  const body = el('div', done ? 'final-text markdown' : 'final-text');
  if (done) body.append(markdownFragment(text));
  else body.textContent = text;
  box.append(body);
  if (finished) box.append(el('div', 'final-usage', usageLine(finished)));
  if (exportButton) {
    const tools = exportButton.parentElement;
    box.append(exportButton);
    tools?.remove();
    exportButton = null;
  }
  log.append(box);
}

/** "Step 3 of 100 · 12,345 tokens · $0.0123": where the task is and what it has used. */
function progressLabel(step, of) {
  const parts = [of ? t('progressStep', [String(step), String(of)]) : t('progressStepAlone', [String(step)])];
  if (used.tokens) parts.push(t('progressTokens', [used.tokens.toLocaleString(chrome.i18n.getUILanguage())]));
  if (used.cost !== null) parts.push(`$${used.cost.toFixed(4)}`);
  return parts.join(' · ');
}

/** The step's screenshot as a thumbnail; a click shows it at full width, another shrinks it. */
function showScreenshot(card, record) {
  card.querySelector('.shot')?.remove();
  const shot = el('img', 'shot');
  shot.src = `data:image/png;base64,${record.screenshot.png_base64}`;
  shot.alt = t('screenshotAlt', [String(record.step)]);
  shot.title = t('screenshotEnlarge');
  shot.addEventListener('click', () => shot.classList.toggle('large'));
  card.append(shot);
}

function render(event) {
  $('empty')?.remove();
  switch (event.type) {
    case 'task_started': {
      stepCards.clear();
      maxSteps = event.max_steps;
      used = { tokens: 0, cost: null };
      log.append(el('div', 'bubble', event.task));
      exportButton = exportControl(event.task_id);
      const tools = el('div', 'task-tools');
      tools.append(exportButton);
      log.append(tools);
      setRunning(true);
      break;
    }
    case 'step_started':
      stepCard(event.step);
      setRunning(true, progressLabel(event.step, event.max_steps));
      break;
    case 'step_planned': {
      const card = stepCard(event.step);
      const goal = showGoal(card, event.thoughts.next_goal);
      if (event.thoughts.evaluation_previous_goal && event.step > 1) {
        card.querySelector('.eval')?.remove();
        goal.before(el('p', 'eval', event.thoughts.evaluation_previous_goal));
      }
      renderActions(card, event.actions);
      break;
    }
    case 'step_finished': {
      const record = event.record;
      const card = stepCard(record.step);
      showGoal(card, record.output ? record.output.next_goal : 'No action this step');
      renderActions(card, record.actions);
      if (record.error) card.append(el('p', 'step-error', record.error));
      if (record.screenshot?.png_base64) showScreenshot(card, record);
      used.tokens += (record.usage?.input_tokens ?? 0) + (record.usage?.output_tokens ?? 0);
      if (typeof record.cost_usd === 'number') used.cost = (used.cost ?? 0) + record.cost_usd;
      if (running) setRunning(true, progressLabel(record.step, maxSteps));
      const t = record.timings;
      card.querySelector('.step-time').textContent = `${((t.observe_ms + t.llm_ms + t.act_ms) / 1000).toFixed(1)} s`;
      break;
    }
    case 'task_restored':
      log.append(el('p', 'restored', `Chrome stopped Tabwright's background worker; the task goes on from step ${event.step}, with the ${event.steps_kept} step(s) it had completed.`));
      setRunning(true, progressLabel(event.step, maxSteps));
      break;
    case 'history_compacted':
      log.append(el('p', 'restored', `Steps 1–${event.summary.through_step} were condensed into a summary, so each request stays within its token budget.`));
      break;
    case 'task_paused':
      showPaused(true);
      setRunning(true, 'Paused');
      break;
    case 'task_resumed':
      showPaused(false);
      setRunning(true, progressLabel(event.step, maxSteps));
      break;
    case 'question_asked':
      renderQuestion(stepCard(event.step), event.question);
      setRunning(true, 'Waiting for your answer');
      break;
    case 'question_answered': {
      const box = stepCard(event.step).querySelector('.question');
      if (box) {
        box.querySelector('form')?.remove();
        box.append(el('p', 'answer', event.answer));
        box.classList.add('answered');
      }
      setRunning(true);
      break;
    }
    case 'task_finished':
      renderFinal(event.end, event);
      conversationOpen = true;
      newConversationButton.hidden = false;
      for (const form of log.querySelectorAll('.question form')) form.remove();
      setRunning(false, event.end.kind === 'done' ? 'Done' : 'Idle');
      break;
    default:
      break;
  }
  scrollToEnd();
}

async function ask(request) {
  try {
    const reply = await chrome.runtime.sendMessage({ to: 'core', request: { v: PROTOCOL_VERSION, ...request } });
    if (!reply) return { type: 'refused', message: 'The Tabwright service worker did not answer. Reload the extension.' };
    return reply;
  } catch (error) {
    return { type: 'refused', message: `The Tabwright service worker is not reachable (${error?.message ?? error}). Reload the extension.` };
  }
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
  const tabs = (await chrome.tabs.query({})).filter((t) => t.id !== self.id && !(t.url ?? '').startsWith(own));
  tabs.sort((a, b) => (b.lastAccessed ?? 0) - (a.lastAccessed ?? 0));
  return tabs[0]?.id ?? null;
}

let starting = false;

async function startTask() {
  const task = taskBox.value.trim();
  if (!task || running || starting) return;
  starting = true;
  showNotice('');
  runButton.disabled = true;
  try {
    const tabId = await targetTabId();
    const reply = await ask({ type: 'start_task', task, tab_id: tabId, start_url: null, follow_up: conversationOpen });
    if (reply.type === 'refused') {
      showNotice(reply.message);
      return;
    }
    taskBox.value = '';
  } catch (error) {
    showNotice(`Could not start the task: ${error?.message ?? error}`);
  } finally {
    starting = false;
    runButton.disabled = false;
  }
}

function showPaused(value) {
  paused = value;
  pauseButton.textContent = value ? 'Resume' : 'Pause';
  pauseButton.disabled = false;
}

/** Pause takes effect at the next step or action (nothing is cut in half); resume at once. */
async function pauseOrResume() {
  pauseButton.disabled = true;
  const reply = await ask({ type: paused ? 'resume_task' : 'pause_task' });
  if (reply.type === 'refused') {
    showNotice(reply.message);
    pauseButton.disabled = false;
    return;
  }
  showPaused(!paused);
  if (paused) statusPill.textContent = 'Pausing…';
}

async function stopTask() {
  stopButton.disabled = true;
  const reply = await ask({ type: 'stop_task' });
  if (reply.type === 'refused') {
    showNotice(reply.message);
    stopButton.disabled = false;
  }
}

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  startTask();
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
  conversationOpen = false;
  newConversationButton.hidden = true;
  log.replaceChildren(el('p', 'empty', 'New conversation: the next task starts fresh.'));
});

// Keeping in step with the worker. Every event comes with its task id and its position (seq) in
// that task's log; `get_status` returns the log from the first event the panel lacks. The panel renders each event once, in
// order: repeats are skipped, and a gap (or a task it never saw start) triggers a resync. The
// port drops whenever Chrome stops the idle worker; the panel reconnects and resyncs.
const sync = { taskId: null, next: 0, syncing: null, held: [] };

function accept(taskId, seq, event) {
  if (sync.syncing) {
    sync.held.push({ taskId, seq, event });
    return;
  }
  if (taskId !== sync.taskId) {
    if (seq !== 0) {
      resync();
      return;
    }
    sync.taskId = taskId;
    sync.next = 0;
  }
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
    const status = await ask({ type: 'get_status', task_id: sync.taskId, since: sync.next });
    if (status.type === 'status' && status.task_id) {
      if (status.task_id !== sync.taskId) {
        sync.taskId = status.task_id;
        sync.next = 0;
      }
      // A worker Chrome restarted keeps the task's log as last saved, which may end before
      // what this panel already showed (a step that was under way): go on from its log.
      if (status.from < sync.next) sync.next = status.from;
      status.events.forEach((event, i) => {
        if (status.from + i >= sync.next) render(event);
      });
      sync.next = Math.max(sync.next, status.from + status.events.length);
      if (!status.running && running) setRunning(false);
    } else if (status.type === 'refused') {
      showNotice(status.message);
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
      showNotice(message.crashed);
      setRunning(false, 'Error');
      return;
    }
    if (message?.event) accept(message.task_id, message.seq, message.event);
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
resync();
