// Driving one task in a browser that runs Tabwright, as the side panel does: start it, follow
// its events, answer its questions before an act, stop it. Shared by the headless runner's
// single task (runner.mjs) and its batch runs (batch.mjs).
//
// Every request goes from an extension page (the panel, opened as a tab) through
// `chrome.runtime.sendMessage({to: 'core', request})`, and every wait is bounded: a request the
// extension does not answer in time, a browser that goes away, a task past its deadline each
// end in an error that says which.
//
// The worker's two contracts are both spoken:
//   - one task per browser: `start_task` is answered `{type: 'accepted'}`, the task is the one
//     `get_status` shows, and a second start is refused ("A task is already running");
//   - several tasks per browser: `start_task` is answered `{type: 'task_accepted', task_id,
//     queued}` (a queued task starts by itself when a slot frees), and `get_status`,
//     `stop_task` and `answer_consent` name the task by `task_id`.

/** How long the extension may take to answer one request, in ms. */
export const ANSWER_MS = 30_000;
/** How long a start may take: it opens the start URL before it answers. */
export const START_MS = 90_000;

import readline from 'node:readline';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** `promise`, or a rejection with `message` after `ms`. */
export function within(promise, ms, message) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(message)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The extension refused to start the task. `kind` says what to do about it:
 *  - 'busy': the browser has no free slot now (another task runs, its queue is full, it is
 *    restoring a task); the same start may be taken later;
 *  - 'browser': the browser cannot run tasks as it is set up (no model, settings it cannot read,
 *    another protocol version); no task will start there;
 *  - 'task': this task cannot start (empty, too long, a schema or start URL it does not take). */
export class Refused extends Error {
  constructor(reply) {
    super(reply?.message ?? `an answer that is not a start: ${JSON.stringify(reply)}`);
    this.reply = reply;
    this.key = reply?.locale_text?.key ?? null;
    this.kind = refusalKind(reply);
  }
}

const BUSY = new Set(['task_running', 'queue_full', 'restoring', 'tab_taken']);
const TASKS_OWN = new Set([
  'empty_task', 'task_too_long', 'bad_output_schema', 'unsupported_output_schema', 'bad_files',
  'bad_start_url', 'restricted_start', 'tab_not_opened_at',
]);

function refusalKind(reply) {
  if (reply?.type !== 'refused') return 'browser';
  const key = reply.locale_text?.key ?? '';
  if (BUSY.has(key) || /already running/i.test(reply.message ?? '')) return 'busy';
  if (TASKS_OWN.has(key)) return 'task';
  if (reply.setting || key.startsWith('settings') || /settings|protocol|version/i.test(key)) return 'browser';
  return 'task';
}

/** The task went away from under its follower: the worker restarted and lost it, or it
 * stopped without saying how it ended. */
export class TaskLost extends Error {}

/** The task ran past its deadline. */
export class TimedOut extends Error {}

/** Opens the panel page of extension `extensionId` in `context` as the channel to the core.
 * Resolves to {ask(request, ms), page, close()}: `ask` sends one request (the protocol's `v`
 * added) and resolves to the reply, or rejects when none comes within `ms`. */
export async function openChannel(context, extensionId) {
  const page = await within(context.newPage(), ANSWER_MS, 'the browser did not open a page');
  try {
    await page.goto(`chrome-extension://${extensionId}/panel/panel.html`, { timeout: ANSWER_MS });
  } catch (error) {
    await page.close().catch(() => {});
    throw error;
  }
  const ask = (request, ms = ANSWER_MS) => within(
    page.evaluate((r) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, ...r } }), request),
    ms,
    `Tabwright did not answer ${request.type} within ${Math.round(ms / 1000)} s`,
  );
  return { ask, page, close: () => page.close().catch(() => {}) };
}

/** Starts `task`. `startUrl`: the core opens a new tab there; else `tabId`: the tab it works
 * in, or with `newTab` a new blank tab the core opens; `outputSchema`: the JSON Schema of its
 * result. Resolves to {taskId, queued, perTask} (`perTask`: the worker names tasks by id; with
 * the one-task contract `taskId` is learnt from the first status); throws `Refused` when the
 * core refuses. */
export async function startTask(ask, { task, tabId = null, startUrl = null, newTab = false, outputSchema = null }) {
  const request = { type: 'start_task', task, tab_id: tabId, start_url: startUrl, output_schema: outputSchema };
  if (newTab) request.new_tab = true;
  const reply = await ask(request, START_MS);
  if (reply?.type === 'task_accepted' && typeof reply.task_id === 'string') {
    return { taskId: reply.task_id, queued: reply.queued === true, perTask: true };
  }
  if (reply?.type === 'accepted') return { taskId: null, queued: false, perTask: false };
  throw new Refused(reply);
}

/** Follows a started task until its `task_finished` event. Each new event goes to
 * `onEvent(event)`; each `consent_asked` is answered with what `decide(consent, keepAwake)`
 * resolves to ({answer, by}), then told to `onConsent(consent, answer, by, reply)`; each status
 * reply goes to `onStatus(reply, taskId)` first. Resolves to
 * {end, steps, taskId}: `end` is the `task_finished` event, `steps` the step records. Throws
 * `TimedOut` past `deadline` (ms since the epoch, or a function that says it), `TaskLost` when
 * the task went away. */
export async function followTask(ask, started, {
  onEvent = () => {}, onStatus = () => {}, decide, onConsent = () => {}, deadline = Infinity, pollMs = 200,
  nextLook = null,
}) {
  // The step records by step: a step a restarted worker did again replaces the first attempt.
  const steps = new Map();
  // Consents answered (by us or as the log says): a restored log that shows one again is not
  // asked again.
  const answeredConsents = new Set();
  let seen = 0;
  let { taskId } = started;
  const status = () => ask({ type: 'get_status', task_id: taskId, since: seen });
  const limit = () => (typeof deadline === 'function' ? deadline() : deadline);
  for (;;) {
    if (Date.now() > limit()) throw new TimedOut('the task ran past its time limit');
    // A browser slow to answer once (a loaded machine, a worker being restored) is asked again;
    // one whose connection is gone is not.
    let reply;
    for (let tries = 1; ; tries++) {
      try {
        reply = await status();
        break;
      } catch (error) {
        if (tries >= 3 || /closed|disconnected|crashed/i.test(error?.message ?? '')) throw error;
        await sleep(1_000);
      }
    }
    if (reply?.type !== 'status') throw new Error(`the core did not report the task's status: ${JSON.stringify(reply)}`);
    taskId ??= reply.task_id;
    if (!reply.task_id || reply.task_id !== taskId || reply.from > seen) {
      throw new TaskLost('the service worker restarted and the task was lost');
    }
    // A worker that Chrome stopped and started again goes on from its last saved event, which
    // may come before what was seen: its log is taken from there.
    seen = reply.from;
    onStatus(reply, taskId);
    let end = null;
    for (const event of reply.events) {
      onEvent(event);
      if (event.type === 'consent_answered') answeredConsents.add(event.id);
      const answeredLater = (id) => reply.events.some((e) => e.type === 'consent_answered' && e.id === id);
      if (event.type === 'consent_asked' && !answeredConsents.has(event.consent.id) && !answeredLater(event.consent.id)) {
        answeredConsents.add(event.consent.id);
        const { answer, by } = await decide(event.consent, () => status().catch(() => {}), limit);
        const request = { type: 'answer_consent', id: event.consent.id, answer };
        if (started.perTask) request.task_id = taskId;
        const answered = await ask(request).catch((error) => ({ type: 'refused', message: error.message }));
        onConsent(event.consent, answer, by, answered);
      }
      if (event.type === 'step_finished') steps.set(event.record.step, event.record);
      if (event.type === 'task_finished') end = event;
    }
    seen += reply.events.length;
    if (end) return { end, steps: [...steps.values()].sort((a, b) => a.step - b.step), taskId };
    if (!reply.running && !waiting(reply, taskId, seen, started)) {
      throw new TaskLost('the task stopped without reporting its end');
    }
    // The next look: after `pollMs`, or when `nextLook` (a browser's watch over all its tasks)
    // says this one moved on.
    await (nextLook ? nextLook(taskId, reply) : sleep(pollMs));
  }
}

/** Whether a task that is not running is waiting for its turn in the browser's queue. */
function waiting(reply, taskId, seen, started) {
  const listed = Array.isArray(reply.tasks) ? reply.tasks.find((t) => t.task_id === taskId) : undefined;
  if (listed) return listed.status === 'queued';
  return started.queued && seen === 0;
}

/** Asks the core to stop the task (best effort: a browser that is gone cannot be asked). */
export async function stopTask(ask, started, taskId = started.taskId) {
  const request = { type: 'stop_task' };
  if (started.perTask) request.task_id = taskId;
  return ask(request, 10_000).catch(() => null);
}

/** The final answer's text (or the reason the task ended without one). */
export function endText(end) {
  if (end.kind === 'done') return end.text;
  if (end.kind === 'error') return end.message;
  if (end.kind === 'step_limit') return `It used every step (${end.max_steps}) without finishing.`;
  if (end.kind === 'too_many_failures') return `${end.failures} steps in a row failed: ${end.last_error}`;
  if (end.kind === 'stopped') return 'It was stopped.';
  return JSON.stringify(end);
}

// --- The person's answers before an act ---------------------------------------------------

/** How each answer is said in the output. */
export const SAID = {
  allow_once: 'allowed once',
  allow_for_task: 'allowed for this task',
  always: 'always allowed',
  deny: 'denied',
};

export const CONFIRM = ['ask', 'deny', 'allow'];

/** The default of --confirm: ask when stdin is a terminal, deny otherwise. */
export const defaultConfirm = () => (process.stdin.isTTY ? 'ask' : 'deny');

/** What answers a task's `consent_asked` events, as --confirm says: `allow` (once), `deny`, or
 * `ask` the person at the terminal, reading one line of stdin per question (questions of tasks
 * that run at once are asked one after another; `write` shows the text, `label(consent)` says
 * whose question it is). Resolves to a `decide(consent, keepAwake, deadline)` for followTask:
 * an answer not given by `deadline` (ms since the epoch, or a function that says it) is a no. */
export function consentAnswers(confirm, { write = (text) => process.stdout.write(text), label = () => '' } = {}) {
  let lines = null;
  let pending = null;
  let queue = Promise.resolve();
  const readLine = async (prompt, deadline) => {
    lines ??= readline.createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
    write(prompt);
    const over = () => Date.now() > (typeof deadline === 'function' ? deadline() : deadline);
    // A line asked for before and not answered in time is the answer to this question.
    pending ??= lines.next();
    let timer;
    const late = new Promise((resolve) => {
      timer = setInterval(() => { if (over()) resolve({ late: true }); }, 200);
    });
    const read = await Promise.race([pending, late]);
    clearInterval(timer);
    if (read.late) {
      write('(no answer in time)\n');
      return '';
    }
    pending = null;
    // A terminal shows what was typed; an answer from a pipe is shown here.
    if (read.done || !process.stdin.isTTY) write(`${read.done ? '' : read.value}\n`);
    return read.done ? '' : read.value.trim().toLowerCase();
  };
  return async (consent, keepAwake, deadline = Infinity) => {
    const offered = (answer) => !Array.isArray(consent.choices) || consent.choices.includes(answer);
    if (confirm === 'allow') return { answer: 'allow_once', by: '--confirm allow' };
    if (confirm === 'deny') return { answer: 'deny', by: '--confirm deny' };
    const asked = queue.then(async () => {
      const who = label(consent);
      write(`  ⚑ ${who}Tabwright asks before: ${consent.act}\n`);
      if (consent.reason) write(`    why: ${consent.reason}\n`);
      const keys = ['[y] once', ...(offered('allow_for_task') ? ['[t] for this task'] : []), ...(offered('always') ? ['[a] always' + (consent.site ? ` on ${consent.site}` : '')] : [])];
      const timer = setInterval(keepAwake, 5_000);
      try {
        return await readLine(`    allow? ${keys.join(', ')}; anything else: no › `, deadline);
      } finally {
        clearInterval(timer);
      }
    });
    queue = asked.catch(() => {});
    const line = await asked;
    const chosen = { y: 'allow_once', t: 'allow_for_task', a: 'always' }[line];
    return { answer: chosen && offered(chosen) ? chosen : 'deny', by: 'you' };
  };
}

// --- LLM settings from the environment ----------------------------------------------------

export class UsageError extends Error {}

const LLM_VARS = ['TABWRIGHT_LLM_BASE_URL', 'TABWRIGHT_LLM_MODEL', 'TABWRIGHT_LLM_API_KEY', 'TABWRIGHT_LLM_PROVIDER', 'TABWRIGHT_MAX_STEPS'];

/** The LLM settings the TABWRIGHT_LLM_* variables give (for saveSettings), or null when none is
 * set (the browser's saved options are used). Throws UsageError when they are half set. */
export function settingsFromEnv(env = process.env) {
  if (!LLM_VARS.some((name) => env[name])) return null;
  // An empty base URL is the provider's own address (the core says which providers have one).
  const missing = ['TABWRIGHT_LLM_MODEL'].filter((name) => !env[name]);
  if (missing.length) throw new UsageError(`Set ${missing.join(' and ')} too (or none of the TABWRIGHT_LLM_* variables, to use the profile's saved options).`);
  return {
    provider: env.TABWRIGHT_LLM_PROVIDER || 'openai',
    baseUrl: env.TABWRIGHT_LLM_BASE_URL,
    model: env.TABWRIGHT_LLM_MODEL,
    apiKey: env.TABWRIGHT_LLM_API_KEY ?? '',
    maxSteps: env.TABWRIGHT_MAX_STEPS ?? '',
  };
}

/** What to add to a refusal that names missing model settings. */
export function settingsHint(reply) {
  return ['settings_no_model', 'settings_no_base_url'].includes(reply?.locale_text?.key)
    ? 'For the headless runner, set TABWRIGHT_LLM_MODEL, TABWRIGHT_LLM_BASE_URL (unless the provider\'s own address will do) and, if needed, TABWRIGHT_LLM_API_KEY.'
    : null;
}
