// Task history: every task and each of its steps, kept in IndexedDB, exportable as JSON.
//
// Why IndexedDB: the task the service worker keeps in chrome.storage.session exists only to
// continue it after Chrome stops the worker; that storage is small (10 MB), holds one task, is
// cleared when the browser closes, and leaves screenshots out. History must outlive all of that
// and keep each step's screenshot, so it lives in the extension origin's IndexedDB, which the
// service worker and the extension's pages (the side panel, later a history browser) share.
//
// Who does what: the service worker writes — `recordEvent` for every event it broadcasts, as it
// is broadcast (the worker can be stopped at any moment, so nothing is batched), and `catchUp`
// once when it starts. Pages read (`listTasks`, `getTask`, `exportTask`, and by conversation
// `listSessions`, `getSession`) and delete (`deleteTask`, `deleteSession`).
//
// Writing never throws: a failure (storage full, the database blocked or newer than this code,
// IndexedDB unavailable) is logged once with what to do about it and kept for `lastFailure()`,
// and the task goes on without that part of its history. Reading rejects with an Error whose
// message says what happened and what to do, for the page to show.
//
// Events may arrive more than once: `catchUp` replays the core's saved log, and a restarted
// worker numbers its events from its last saved point on (so `seq` is not unique, and is used
// only in messages). Recording is therefore keyed by what an event describes — the task by its
// id, a step by (task id, step number) — and repeating an event changes nothing. The saved log
// leaves screenshots out, so a step replayed without its image keeps the image it has; a step
// the restarted worker did again replaces the earlier attempt.
//
// Schema, database `tabwright`, version 1 (`UPGRADES` below; a new version appends a function
// that moves existing data forward, never edits an earlier one):
//
//   tasks  key task_id; index `started_at`. One row per task:
//     task_id, conversation_id (the id of the conversation's first task: a follow-up shares
//     it; rows written before it existed lack it and are their own conversation), task (what
//     the user asked), model (the settings' model, '' if unknown),
//     max_steps, started_at / finished_at (ms since the epoch, when this browser recorded the
//     task's first / final event), running, paused, interrupted (true when the browser or worker
//     went away and no end was ever recorded), restored ({step, steps_kept, reason} of the last
//     time a restarted worker continued it, or null), summary ({through_step, text}: the model's
//     latest summary of old steps, or null), end (TaskEnd as the core sent it, null
//     while running), usage {input_tokens, output_tokens}, cost_usd (USD, or null when unknown),
//     unpriced_steps (steps that used tokens without a price), step_count (steps kept), seen
//     (what search looks at besides the task and its end: the pages' URLs and titles and the
//     model's goals, each once, at most SEEN_LIMIT). The fields that describe where the task
//     stands (task to step_count, but not started_at, finished_at, interrupted and seen) are
//     the core's `TaskState` (src/agent/events.rs) sent with each event, stored as they come:
//     the history works none of them out itself.
//   steps  key [task_id, step]. {task_id, step, record}: `record` is the StepRecord exactly as
//     the core sent it (src/agent/history.rs): url, title, output (the model's thoughts),
//     actions (name, description, params, result), error, usage, cost_usd, timings
//     {observe_ms, llm_ms, act_ms}, and screenshot {png_base64, width, height} when the step
//     took one.

export const DB_NAME = 'tabwright';
/** The format tag and version of `exportTask`'s object. */
export const EXPORT_FORMAT = 'tabwright-task';
export const EXPORT_VERSION = 1;

const TASKS = 'tasks';
const STEPS = 'steps';

/** `UPGRADES[n]` takes the database from version n to n + 1, inside the upgrade transaction. */
/** @type {((db: IDBDatabase, tx: IDBTransaction) => void)[]} */
const UPGRADES = [
  (db) => {
    const tasks = db.createObjectStore(TASKS, { keyPath: 'task_id' });
    tasks.createIndex('started_at', 'started_at');
    db.createObjectStore(STEPS, { keyPath: ['task_id', 'step'] });
  },
];
export const DB_VERSION = UPGRADES.length;

/** How long an upgrade waits for older connections (another open Tabwright page) to close. */
const BLOCKED_WAIT_MS = 5_000;
/** When this context loaded the module: in the service worker, when the worker started. */
const loadedAt = Date.now();

let opening = null; // Promise<IDBDatabase> of the open (or opening) connection
let lastError = null;

/** The connection, opened (and upgraded) on first use; opened again after it closed or failed. */
function database() {
  if (opening) return opening;
  const attempt = new Promise((resolve, reject) => {
    let settled = false;
    let blockedTimer = null;
    const fail = (error) => {
      settled = true;
      clearTimeout(blockedTimer);
      reject(error);
    };
    let request;
    try {
      request = indexedDB.open(DB_NAME, DB_VERSION);
    } catch (error) {
      fail(error);
      return;
    }
    request.onupgradeneeded = (e) => {
      for (let v = e.oldVersion; v < DB_VERSION; v++) UPGRADES[v](request.result, request.transaction);
    };
    request.onblocked = () => {
      blockedTimer = setTimeout(() => fail(new DOMException('upgrade blocked', 'BlockedError')), BLOCKED_WAIT_MS);
    };
    request.onerror = () => fail(request.error);
    request.onsuccess = () => {
      const db = request.result;
      if (settled) {
        db.close(); // it came too late; the caller was already told
        return;
      }
      settled = true;
      clearTimeout(blockedTimer);
      const forget = () => {
        if (opening === attempt) opening = null;
      };
      // Another context upgrades or deletes the database: let it, and open afresh next time.
      db.onversionchange = () => {
        db.close();
        forget();
      };
      db.onclose = forget; // closed by the browser (site data cleared, disk error)
      resolve(db);
    };
  });
  opening = attempt;
  attempt.catch(() => {
    if (opening === attempt) opening = null;
  });
  return attempt;
}

function requested(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function completed(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new DOMException('transaction aborted', 'AbortError'));
  });
}

/** Runs `work(tx)` in one transaction over both stores and resolves once it committed. */
async function transaction(mode, work) {
  for (let attempt = 0; ; attempt++) {
    const db = await database();
    let tx;
    try {
      tx = db.transaction([TASKS, STEPS], mode);
    } catch (error) {
      // The connection was closing (another context upgrading): once more on a new one.
      if (error?.name === 'InvalidStateError' && attempt === 0) {
        opening = null;
        continue;
      }
      throw error;
    }
    const done = completed(tx);
    done.catch(() => {}); // reported through `work` or below, not as an unhandled rejection
    let result;
    try {
      result = await work(tx);
    } catch (error) {
      try {
        tx.abort();
      } catch {
        // already finished or aborted
      }
      throw error;
    }
    await done;
    return result;
  }
}

/** What went wrong and what to do, in words for the user. */
function explain(error) {
  const what = `${error?.name ?? 'Error'}: ${error?.message ?? error}`;
  switch (error?.name) {
    case 'QuotaExceededError':
      return `the browser has no room left for Tabwright's data (${what}). Free disk space, or delete old tasks from the history.`;
    case 'VersionError':
      return `the history database was made by a newer Tabwright (${what}). Update Tabwright, or remove the extension's data to start a new history.`;
    case 'BlockedError':
      return `another Tabwright page holds the history open with an older version (${what}). Close Tabwright's side panel and pages and open them again.`;
    case 'InvalidStateError':
    case 'UnknownError':
      return `IndexedDB is not available (${what}). Restart Chrome; if it persists, the profile's storage may be damaged.`;
    default:
      return `IndexedDB failed (${what}).`;
  }
}

function report(doing, error) {
  const message = `Tabwright could not keep its task history (${doing}): ${explain(error)} The task goes on; this part of its history is not kept.`;
  // Once per distinct problem: a broken database would otherwise log every event.
  if (lastError?.message !== message) console.warn(message);
  lastError = { message, name: error?.name ?? 'Error', at: Date.now() };
}

/** The last write failure ({message, name, at}), or null: for a page to tell the user. */
export function lastFailure() {
  return lastError;
}

function historyError(doing, error) {
  return new Error(`Could not ${doing}: ${explain(error)}`, { cause: error });
}

/** How many distinct URLs, titles and goals a task row keeps for search. */
const SEEN_LIMIT = 400;

function newTask(taskId, now) {
  return {
    task_id: taskId,
    conversation_id: taskId,
    task: '',
    model: '',
    max_steps: null,
    started_at: now,
    finished_at: null,
    running: true,
    paused: false,
    interrupted: false,
    restored: null,
    // The model's latest summary of old steps ({through_step, text}), when the task had one.
    summary: null,
    end: null,
    usage: { input_tokens: 0, output_tokens: 0 },
    cost_usd: null,
    unpriced_steps: 0,
    step_count: 0,
    seen: [],
  };
}

/** Notes a step's page and goal for search (see `seen`). */
function noteSeen(task, record) {
  task.seen ??= [];
  for (const text of [record.url, record.title, record.output?.next_goal]) {
    if (typeof text !== 'string' || !text || task.seen.includes(text)) continue;
    if (task.seen.length >= SEEN_LIMIT) return;
    task.seen.push(text.slice(0, 500));
  }
}

/** JSON with sorted keys, so two records compare equal whatever order their keys came in. */
function canonical(value) {
  return JSON.stringify(value, (key, v) => (v && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
    : v));
}

/** The same step, screenshots aside (the saved log leaves them out). */
function sameStep(a, b) {
  const { screenshot: _a, ...restA } = a;
  const { screenshot: _b, ...restB } = b;
  return canonical(restA) === canonical(restB);
}

/** Writes a step's record; false when it holds nothing new (a repeat). */
async function putStep(tx, task, record) {
  if (!record || !Number.isInteger(record.step)) throw new TypeError('a step_finished event without a step number');
  const steps = tx.objectStore(STEPS);
  const old = await requested(steps.get([task.task_id, record.step]));
  if (old && sameStep(old.record, record) && (old.record.screenshot || !record.screenshot)) return false;
  // A record the core kept short once its step fell far behind never replaces the whole one.
  if (old && record.trimmed && !old.record.trimmed) return false;
  steps.put({ task_id: task.task_id, step: record.step, record });
  noteSeen(task, record);
  return true;
}

/** The events that change what the history keeps (see `apply`). */
const KEPT_EVENTS = new Set(['task_started', 'task_restored', 'task_paused', 'task_resumed', 'history_compacted',
  'step_finished', 'task_finished']);

/** The fields of a task's row the core says (`TaskState`, src/agent/events.rs). */
const FROM_CORE = ['task', 'model', 'max_steps', 'conversation_id', 'replay', 'scheduled', 'running', 'paused', 'restored', 'summary',
  'end', 'usage', 'cost_usd', 'unpriced_steps', 'step_count'];

/**
 * Applies one event to the stores, with where the core says the task stands after it
 * (`state`); resolves once written. The row's fields come from the core as they are: the
 * history works out nothing the core knows. What it keeps of its own: the steps' records (by
 * step number, a repeat changing nothing and a step done again replacing the first attempt),
 * when this browser saw the task start and end, what search looks at, and `interrupted`.
 */
async function apply(tx, taskId, event, state) {
  const tasks = tx.objectStore(TASKS);
  const stored = await requested(tasks.get(taskId));
  const task = stored ?? newTask(taskId, Date.now());
  const before = canonical(task);
  if (state && typeof state === 'object') {
    for (const name of FROM_CORE) if (name in state) task[name] = state[name];
    task.conversation_id ||= taskId;
    if (task.running) task.interrupted = false;
  }
  let stepWritten = false;
  if (event.type === 'step_finished') stepWritten = await putStep(tx, task, event.record);
  if (event.type === 'task_finished') {
    task.interrupted = false;
    task.finished_at ??= Date.now();
  }
  if (stepWritten || canonical(task) !== before) tasks.put(task);
}

/**
 * Records one event of task `taskId` (as broadcast: the event, its position `seq` in the
 * task's log, and `state`, where the core says the task stands after it). Repeats change
 * nothing; see the module comment. Never rejects: resolves to true
 * when the event is in the history, false when it could not be written (see `lastFailure`).
 * @param {string} taskId
 * @param {number} seq
 * @param {import('tabwright-types/from-core').AgentEvent} event
 * @param {import('tabwright-types/from-core').TaskState} [state]
 */
export async function recordEvent(taskId, seq, event, state) {
  try {
    if (typeof taskId !== 'string' || !taskId || typeof event?.type !== 'string') {
      throw new TypeError(`not a task event (task ${JSON.stringify(taskId)}, type ${JSON.stringify(event?.type)})`);
    }
    // Events the history keeps nothing of cost no transaction: they come every step, on the
    // step's own time.
    if (!KEPT_EVENTS.has(event.type)) return true;
    await transaction('readwrite', (tx) => apply(tx, taskId, event, state));
    return true;
  } catch (error) {
    report(`recording ${event?.type ?? 'an event'} #${seq} of ${taskId}`, error);
    return false;
  }
}

/**
 * Brings the history up to date when the service worker starts: `replies` are the core's
 * `get_status` replies, one for each task it holds (with its saved log). A task's log is
 * recorded again if the history has it as running (or lacks it while it runs) — what the
 * stopped worker broadcast but did not get written. Tasks an earlier worker left running that
 * are not among the core's running tasks are marked interrupted: nothing will ever end them.
 * Never rejects.
 * @param {import('tabwright-types/from-core').PanelReply[]} replies
 */
export async function catchUp(replies) {
  try {
    const live = new Set();
    for (const reply of replies) {
      const status = reply?.type === 'status' ? reply : null;
      const current = status?.task_id ?? null;
      if (!current) continue;
      const stored = await transaction('readonly', (tx) => requested(tx.objectStore(TASKS).get(current)));
      if (stored ? stored.running : status.running) {
        const from = status.from ?? 0;
        for (const [i, event] of (status.events ?? []).entries()) await recordEvent(current, from + i, event, status.state);
      }
      if (status.running) live.add(current);
    }
    await transaction('readwrite', async (tx) => {
      const tasks = tx.objectStore(TASKS);
      for (const task of await requested(tasks.getAll())) {
        // Rows this worker created belong to tasks it runs.
        if (!task.running || live.has(task.task_id) || task.started_at >= loadedAt) continue;
        tasks.put({ ...task, running: false, paused: false, interrupted: true });
      }
    });
    return true;
  } catch (error) {
    report('catching up after the service worker started', error);
    return false;
  }
}

const stepRange = (taskId) => IDBKeyRange.bound([taskId, -Infinity], [taskId, Infinity]);

/** Every task, newest first, without steps. Rejects with an Error that says what to do. */
export async function listTasks() {
  try {
    return await transaction('readonly', (tx) => new Promise((resolve, reject) => {
      const out = [];
      const cursor = tx.objectStore(TASKS).index('started_at').openCursor(null, 'prev');
      cursor.onerror = () => reject(cursor.error);
      cursor.onsuccess = () => {
        const c = cursor.result;
        if (!c) {
          resolve(out);
          return;
        }
        out.push(c.value);
        c.continue();
      };
    }));
  } catch (error) {
    throw historyError('read the task history', error);
  }
}

/** The task and its step records in step order ({task, steps}), or null if it is not kept. */
export async function getTask(taskId) {
  try {
    return await transaction('readonly', async (tx) => {
      const task = await requested(tx.objectStore(TASKS).get(taskId));
      if (!task) return null;
      const rows = await requested(tx.objectStore(STEPS).getAll(stepRange(taskId)));
      return { task, steps: rows.map((row) => row.record) };
    });
  } catch (error) {
    throw historyError(`read task ${taskId} from the history`, error);
  }
}

/**
 * The task as a JSON-serialisable object, or null if it is not kept:
 * {format: 'tabwright-task', version: 1, exported_at (ISO 8601), task (its row, as above),
 *  steps (every StepRecord in order, screenshots included)}.
 */
export async function exportTask(taskId) {
  const kept = await getTask(taskId);
  if (!kept) return null;
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: new Date().toISOString(),
    task: kept.task,
    steps: kept.steps,
  };
}

/** An id as a file name's part: without its `task-` prefix, safe in any file system. */
const fileId = (id) => String(id).replace(/^task-/, '').replace(/[^A-Za-z0-9._-]+/g, '_');

/** A file name for a task's export: tabwright-task-<id>.json. */
export function exportFileName(taskId) {
  return `tabwright-task-${fileId(taskId)}.json`;
}

/** Deletes the task and its steps; resolves to whether it was kept. */
export async function deleteTask(taskId) {
  try {
    return await transaction('readwrite', async (tx) => {
      const kept = await requested(tx.objectStore(TASKS).count(taskId));
      tx.objectStore(TASKS).delete(taskId);
      tx.objectStore(STEPS).delete(stepRange(taskId));
      return kept > 0;
    });
  } catch (error) {
    throw historyError(`delete task ${taskId} from the history`, error);
  }
}

/** The conversation a task row belongs to (rows from before conversations were kept: its own). */
const conversationOf = (task) => task.conversation_id || task.task_id;

/** What a task's end says, for search and lists: the answer, or why it ended. */
export function endText(end) {
  if (!end) return '';
  return end.text ?? end.message ?? end.last_error ?? '';
}

/** Whether every word of `query` (case and accents aside) is in the task's text, its end,
 * the pages it saw or its goals. */
function matches(task, words) {
  if (!words.length) return true;
  const fold = (text) => String(text ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLocaleLowerCase();
  const haystack = fold([task.task, endText(task.end), task.summary?.text, ...(task.seen ?? [])].join('\n'));
  return words.every((word) => haystack.includes(fold(word)));
}

/**
 * The conversations (sessions) in the history, the most recently active first:
 * {conversation_id, title (its first task), started_at, last_at, running, step_count, cost_usd
 * (null when nothing was priced), tasks (its rows, oldest first)}. With `query`, only those
 * where some task matches every word of it. Rejects with an Error that says what to do.
 */
export async function listSessions(query = '') {
  const words = String(query).trim().split(/\s+/).filter(Boolean);
  const sessions = new Map();
  for (const task of await listTasks()) {
    const id = conversationOf(task);
    let session = sessions.get(id);
    if (!session) {
      session = { conversation_id: id, tasks: [], matched: false };
      sessions.set(id, session);
    }
    session.tasks.unshift(task); // listTasks is newest first
    session.matched ||= matches(task, words);
  }
  return [...sessions.values()]
    .filter((s) => s.matched)
    .map(({ conversation_id, tasks }) => {
      const priced = tasks.filter((t) => typeof t.cost_usd === 'number');
      return {
        conversation_id,
        title: tasks[0].task,
        started_at: tasks[0].started_at,
        last_at: Math.max(...tasks.map((t) => t.finished_at ?? t.started_at)),
        running: tasks.some((t) => t.running),
        step_count: tasks.reduce((n, t) => n + (t.step_count ?? 0), 0),
        cost_usd: priced.length ? priced.reduce((sum, t) => sum + t.cost_usd, 0) : null,
        tasks,
      };
    })
    .sort((a, b) => b.last_at - a.last_at);
}

/** A conversation's tasks with their steps, oldest first ([{task, steps}]); empty if none is kept. */
export async function getSession(conversationId) {
  const tasks = (await listTasks()).filter((t) => conversationOf(t) === conversationId).reverse();
  const out = [];
  for (const task of tasks) {
    const kept = await getTask(task.task_id);
    if (kept) out.push(kept);
  }
  return out;
}

/** A conversation as one JSON-serialisable object: {format: 'tabwright-session', version: 1,
 * exported_at, conversation_id, tasks: [exportTask's {task, steps}]}, or null if none is kept. */
export async function exportSession(conversationId) {
  const tasks = await getSession(conversationId);
  if (!tasks.length) return null;
  return { format: 'tabwright-session', version: 1, exported_at: new Date().toISOString(), conversation_id: conversationId, tasks };
}

/** A file name for a conversation's export, ending in `extension` (json, html). */
export function sessionFileName(conversationId, extension) {
  return `tabwright-session-${fileId(conversationId)}.${extension}`;
}

/** Deletes every task of a conversation and their steps; resolves to how many tasks it had. */
export async function deleteSession(conversationId) {
  const tasks = (await listTasks()).filter((t) => conversationOf(t) === conversationId);
  for (const task of tasks) await deleteTask(task.task_id);
  return tasks.length;
}
