// Batch runs for the headless runner: many tasks from a JSON Lines file, several at once, in
// one local headless Chromium or in browsers that already run Tabwright and serve the DevTools
// protocol; one result line per task, appended to the results file as soon as the task ends.
//
//   scripts/run --tasks FILE.jsonl --out results.jsonl [--parallel N] [--resume]
//               [--browser-endpoint ws://…]… [--confirm ask|deny|allow] [--profile DIR]
//               [--task-timeout SECONDS]
//
// A task line: {"id"?, "task", "url"?, "schema"?, "expect"?, "expect_url_text"?: {url, text}}
// (README, "Batch runs"). A line that is not one is reported with its number and why, and
// skipped; the summary counts it.
//
// Where tasks run. Without --browser-endpoint, in one headless Chromium launched here (on
// --profile, or a fresh profile), N tasks at once, each in a tab the core opens (closed when
// the task ends, where the worker lists the task's tabs); the browser's `max_parallel_tasks`
// is set to N. With endpoints, each browser gets up to N tasks at once
// (so two browsers and --parallel 3 run up to 6), and a task goes to the browser with the fewest
// running. A browser whose Tasks at once is lower keeps the rest in its worker's queue, and a
// task's time limit counts from when it runs there; an older one that runs one at a time
// refuses a second start ("A task is already running"): it then gets only as many as it took.
// A browser that goes away (its connection closes, or it stops answering) is named on stderr;
// its unfinished tasks go to the other browsers, and `attempts` counts the tries (three at
// most). A browser that refuses every task (no model set, settings it cannot read) is named and
// left out.
//
// The results file is only ever appended to, each line synced to disk as it is written: lines
// written are never lost, and a task killed halfway has no line. --resume runs only the tasks
// whose id has no line yet; without it a non-empty results file is refused. On Ctrl-C (or
// SIGTERM) the running tasks are stopped and get no line; --resume runs them again.
//
// Exit status: 0 when every task ran and succeeded, 2 when some failed or lines were skipped,
// 1 when the batch could not run (or tasks were left without a browser to run them).
import { closeSync, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, isDeepStrictEqual } from 'node:util';
import {
  launchWithExtension, saveSettings, saveMaxParallelTasks, connectEndpoint,
} from './browser.mjs';
import {
  openChannel, startTask, followTask, stopTask, consentAnswers, settingsFromEnv, settingsHint, endText,
  within, Refused, TimedOut, TaskLost, UsageError, SAID, CONFIRM, defaultConfirm,
} from './drive-task.mjs';

/** The most tasks one browser runs at once (the extension's own limit). */
export const MAX_PARALLEL = 8;
/** Tries of one task on browsers that went away, before it is written as lost. */
export const MAX_ATTEMPTS = 3;
export const DEFAULT_TASK_TIMEOUT_S = 900;

const USAGE = 'usage: scripts/run --tasks tasks.jsonl --out results.jsonl [--parallel N] [--resume] [--browser-endpoint ws://…]… [--confirm ask|deny|allow] [--profile DIR] [--task-timeout SECONDS]';
const FIELDS = ['id', 'task', 'url', 'schema', 'expect', 'expect_url_text'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- The task file ----------------------------------------------------------------------------

/** What a JSON value is, in words. */
function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return 'an object';
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Why `value` is not an http(s) URL, or null when it is one. */
function notHttpUrl(value) {
  if (typeof value !== 'string') return `must be an http(s) URL, not ${kindOf(value)}`;
  let url;
  try {
    url = new URL(value);
  } catch {
    return `must be an absolute http(s) URL: ${JSON.stringify(value)}`;
  }
  return ['http:', 'https:'].includes(url.protocol) ? null : `must be an http(s) URL: ${JSON.stringify(value)}`;
}

/** The task of one line's JSON value, or {why}. */
function taskOf(value, lineNumber) {
  if (!isObject(value)) return { why: `a task line is a JSON object such as {"task": "…", "url": "https://…"}, not ${kindOf(value)}` };
  const unknown = Object.keys(value).filter((k) => !FIELDS.includes(k));
  if (unknown.length) return { why: `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')} (a task line has ${FIELDS.join(', ')})` };
  if (!('task' in value)) return { why: 'no "task" (the text of what to do)' };
  if (typeof value.task !== 'string') return { why: `"task" must be text, not ${kindOf(value.task)}` };
  if (!value.task.trim()) return { why: '"task" is empty' };
  if ('id' in value && typeof value.id !== 'string') return { why: `"id" must be text, not ${kindOf(value.id)}` };
  if ('id' in value && !value.id.trim()) return { why: '"id" is empty' };
  if ('url' in value) {
    const bad = notHttpUrl(value.url);
    if (bad) return { why: `"url" ${bad}` };
  }
  if ('schema' in value && !isObject(value.schema)) return { why: `"schema" must be a JSON Schema object, not ${kindOf(value.schema)}` };
  if ('expect' in value) {
    const e = value.expect;
    if (typeof e === 'string') {
      if (!e.trim()) return { why: '"expect" is empty' };
    } else if (e !== null && typeof e === 'object') {
      if (!('schema' in value)) return { why: '"expect" is data, which only a task with a "schema" gives (or make it text the answer must contain)' };
    } else {
      return { why: `"expect" must be text (the answer contains it) or data (the result equals it), not ${kindOf(e)}` };
    }
  }
  if ('expect_url_text' in value) {
    const check = value.expect_url_text;
    if (!isObject(check)) return { why: `"expect_url_text" must be an object {"url": …, "text": …}, not ${kindOf(check)}` };
    const extra = Object.keys(check).filter((k) => k !== 'url' && k !== 'text');
    if (extra.length) return { why: `"expect_url_text" has only "url" and "text", not ${extra.map((k) => JSON.stringify(k)).join(', ')}` };
    const bad = notHttpUrl(check.url);
    if (bad) return { why: `"expect_url_text"."url" ${bad}` };
    if (typeof check.text !== 'string' || !check.text.trim()) return { why: `"expect_url_text"."text" must be text that is not empty, not ${kindOf(check.text)}` };
  }
  return {
    task: {
      id: value.id ?? `line-${lineNumber}`,
      line: lineNumber,
      task: value.task,
      url: value.url ?? null,
      schema: value.schema ?? null,
      expect: value.expect ?? null,
      expectUrlText: value.expect_url_text ?? null,
    },
  };
}

/** Reads the task file: {tasks, skipped: [{line, why}]}. Blank lines are nothing. Throws
 * UsageError when the file cannot be read or holds no line at all. */
export function readTaskFile(file) {
  let text;
  try {
    if (statSync(file).isDirectory()) throw new Error('it is a folder');
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`The task file ${file} could not be read: ${error.code === 'ENOENT' ? 'there is no such file' : error.message}`);
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  const tasks = [];
  const skipped = [];
  const byId = new Map();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    let value;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      skipped.push({ line, why: `not JSON (${error.message})` });
      return;
    }
    const { task, why } = taskOf(value, line);
    if (why) {
      skipped.push({ line, why });
      return;
    }
    if (byId.has(task.id)) {
      skipped.push({ line, why: `the id ${JSON.stringify(task.id)} is already line ${byId.get(task.id)}'s` });
      return;
    }
    byId.set(task.id, line);
    tasks.push(task);
  });
  if (!tasks.length && !skipped.length) {
    throw new UsageError(`The task file ${file} is empty: write one task a line, such as {"task": "Find the price of …", "url": "https://…"}`);
  }
  return { tasks, skipped };
}

// --- The results file -------------------------------------------------------------------------

/** The lines already in the results file: {lines (parsed), bad: [{line, why}], cutShort}. */
export function readResults(file) {
  if (!existsSync(file)) return { lines: [], bad: [], cutShort: false };
  const text = readFileSync(file, 'utf8');
  const lines = [];
  const bad = [];
  text.split('\n').forEach((raw, i) => {
    if (!raw.trim()) return;
    try {
      const value = JSON.parse(raw);
      if (!isObject(value) || typeof value.id !== 'string') throw new Error('no "id"');
      lines.push(value);
    } catch (error) {
      bad.push({ line: i + 1, why: error.message });
    }
  });
  return { lines, bad, cutShort: text.length > 0 && !text.endsWith('\n') };
}

/** Opens the results file for appending; `append(result)` writes one line and syncs it. */
function openResults(file, { cutShort }) {
  let fd;
  try {
    fd = openSync(file, 'a');
  } catch (error) {
    throw new UsageError(`The results file ${file} cannot be written: ${error.message}`);
  }
  const put = (text) => {
    writeSync(fd, text);
    fsyncSync(fd);
  };
  // A line cut short by a run killed while writing stays as it is; the next starts on its own.
  if (cutShort) put('\n');
  return {
    append: (result) => put(`${JSON.stringify(result)}\n`),
    close: () => closeSync(fd),
  };
}

// --- Checking a result ------------------------------------------------------------------------

const normalised = (text) => String(text).toLowerCase().replace(/\s+/g, ' ').trim();

/** Why the task's end does not meet its expectation, or null when it does. */
export function unmetExpectation(task, end) {
  if (task.expect === null) return null;
  if (typeof task.expect === 'string') {
    const said = [end.text ?? '', end.data === undefined ? '' : JSON.stringify(end.data)].join('\n');
    return normalised(said).includes(normalised(task.expect)) ? null : `the answer does not contain ${JSON.stringify(task.expect)}`;
  }
  if (end.data === undefined) return 'the task gave no data to compare with "expect"';
  return isDeepStrictEqual(end.data, task.expect) ? null : `the data is not the expected ${JSON.stringify(task.expect)}`;
}

/** Why the page at `check.url`, opened in `context` after the task, does not show `check.text`,
 * or null when it does. */
async function unmetUrlText(context, check) {
  let page;
  try {
    page = await within(context.newPage(), 15_000, 'no page opened');
    await page.goto(check.url, { timeout: 30_000 });
    const text = await within(page.evaluate(() => document.body?.innerText ?? ''), 15_000, 'the page did not answer');
    return normalised(text).includes(normalised(check.text)) ? null : `${check.url} does not show ${JSON.stringify(check.text)}`;
  } catch (error) {
    return `${check.url} could not be read: ${error.message.split('\n')[0]}`;
  } finally {
    await page?.close().catch(() => {});
  }
}

// --- Browsers ---------------------------------------------------------------------------------

/** A browser tasks run in, from a launched or connected one ({context, extensionId, close}) and
 * `disconnects(fn)`, which calls `fn` when it goes away: {name, context, ask, capacity, …}, up
 * to `capacity` tasks at once. `onLost(browser, why)` is told once when it goes away. */
export async function useBrowser(name, { context, extensionId, disconnects, close }, capacity, onLost) {
  const channel = await openChannel(context, extensionId);
  const browser = {
    name,
    context,
    ask: channel.ask,
    page: channel.page,
    capacity,
    accepted: 0,
    running: new Set(),
    busyUntil: 0,
    alive: true,
    noted: false,
    lost(why) {
      if (!browser.alive) return;
      browser.alive = false;
      onLost(browser, why);
    },
    close: async () => {
      browser.alive = false;
      await channel.close();
      await close();
    },
  };
  disconnects(() => browser.lost('its connection closed'));
  channel.page.on('crash', () => browser.lost('its page crashed'));
  return browser;
}

/** A name for an endpoint that shows no secret its query may carry (a token). */
function endpointName(endpoint) {
  try {
    const url = new URL(endpoint);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return endpoint;
  }
}

// --- Running the batch ------------------------------------------------------------------------

/** One watch over all the tasks a browser runs: one `get_status` every `pollMs` for the list of
 * tasks, and a task's follower looks again (asks for its events) only once its state or step
 * changed. N tasks at once then cost the browser one request a poll, not N: the requests of
 * the followers are work the browser does beside the tasks, and grew with them. A browser
 * whose worker sends no list (an older one) wakes every follower every poll; every follower
 * looks again at least every 5 s. Returns the followers' `nextLook`. */
function watchOf(browser, pollMs) {
  if (browser.watch) return browser.watch;
  const followers = new Map(); // task id → {key, resolve, since}
  let timer = null;
  const keyOf = (tasks, taskId) => {
    const listed = Array.isArray(tasks) ? tasks.find((t) => t.task_id === taskId) : undefined;
    return listed ? `${listed.status}:${listed.step}` : null;
  };
  async function look() {
    timer = null;
    if (!followers.size) return;
    // Named, and past its end: the list of tasks comes without any task's log.
    const [anyFollowed] = followers.keys();
    const list = { type: 'get_status', task_id: anyFollowed, since: 0xffffffff };
    const reply = await browser.ask(list, 30_000).catch(() => null);
    const tasks = Array.isArray(reply?.tasks) ? reply.tasks : null;
    const now = performance.now();
    for (const [taskId, follower] of followers) {
      const key = keyOf(tasks, taskId);
      if (!tasks || key === null || key !== follower.key || now - follower.since > 5_000) {
        followers.delete(taskId);
        follower.resolve();
      }
    }
    if (followers.size) timer = setTimeout(look, pollMs);
  }
  browser.watch = (taskId, reply) => new Promise((resolve) => {
    followers.set(taskId, { key: keyOf(reply.tasks, taskId), resolve, since: performance.now() });
    timer ??= setTimeout(look, pollMs);
  });
  return browser.watch;
}

/** Closes the tabs a finished task worked in (best effort). */
async function closeTaskTabs(browser, tabs) {
  if (!browser.alive || !tabs.size) return;
  // One by one: Chrome stops a list at the first tab that is gone.
  const closeAll = (ids) => Promise.all(ids.map((id) => chrome.tabs.remove(id).catch(() => {})));
  await within(browser.page.evaluate(closeAll, [...tabs]), 10_000, '').catch(() => {});
}

/** A result line. */
function resultLine(task, browser, attempts, fields) {
  return {
    id: task.id,
    task: task.task,
    success: false,
    answer: null,
    end_kind: null,
    steps: 0,
    input_tokens: 0,
    cached_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
    seconds: 0,
    error: null,
    endpoint: browser?.name ?? null,
    attempts,
    ...fields,
  };
}

const round2 = (x) => Math.round(x * 100) / 100;

/** Runs one task in `browser`. Resolves to {result} (its line), {busy: refusal}, {unusable:
 * why} (the browser runs no task), {lost: why} (the browser went away) or {interrupted}. */
async function runOne(item, browser, options) {
  const { task } = item;
  const { decide, onConsent, taskTimeoutMs, pollMs, stopping, onStarted } = options;
  let started = null;
  // The tabs the worker says the task works in (the several-tasks contract lists them).
  const tabs = new Set();
  // What the task's finished steps used, by step: a step a restored worker sends again counts once.
  const stepsSeen = new Map();
  const began = performance.now();
  const elapsed = () => round2((performance.now() - began) / 1000);
  const partial = () => {
    const used = [...stepsSeen.values()];
    const sum = (read) => used.reduce((total, record) => total + (read(record) ?? 0), 0);
    const priced = used.filter((record) => typeof record.cost_usd === 'number');
    return {
      steps: used.length,
      input_tokens: sum((r) => r.usage?.input_tokens),
      cached_tokens: sum((r) => r.usage?.cached_input_tokens),
      output_tokens: sum((r) => r.usage?.output_tokens),
      cost_usd: priced.length ? priced.reduce((total, r) => total + r.cost_usd, 0) : null,
    };
  };
  try {
    try {
      // The core opens the task's tab: at its URL, or blank.
      started = await startTask(browser.ask, { task: task.task, startUrl: task.url, newTab: !task.url, outputSchema: task.schema });
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      if (error.kind === 'busy') return { busy: error };
      if (error.kind === 'browser') return { unusable: error.message + (settingsHint(error.reply) ? ` ${settingsHint(error.reply)}` : '') };
      return { result: resultLine(task, browser, item.attempts, { end_kind: 'refused', error: error.message, seconds: elapsed() }) };
    }
    onStarted(item, browser);
    // The time limit counts from when the task runs: a wait in the browser's queue is not its.
    let runningSince = null;
    const deadline = () => (stopping() ? 0 : (runningSince ?? performance.now()) + taskTimeoutMs - performance.now() + Date.now());
    let end;
    try {
      ({ end } = await followTask(browser.ask, started, {
        pollMs,
        nextLook: watchOf(browser, pollMs),
        deadline,
        decide: (consent, keepAwake, until) => decide(item, consent, keepAwake, until),
        onConsent: (consent, answer, by, answered) => onConsent(item, consent, answer, by, answered),
        onStatus: (reply, taskId) => {
          const listed = Array.isArray(reply.tasks) ? reply.tasks.find((t) => t.task_id === taskId) : null;
          if (runningSince === null && listed?.status !== 'queued') runningSince = performance.now();
          for (const tab of listed?.tabs ?? []) if (Number.isInteger(tab)) tabs.add(tab);
        },
        onEvent: (event) => {
          if (event.type === 'step_finished') stepsSeen.set(event.record.step, event.record);
        },
      }));
    } catch (error) {
      if (error instanceof TimedOut) {
        await stopTask(browser.ask, started);
        if (stopping()) return { interrupted: true };
        return { result: resultLine(task, browser, item.attempts, { ...partial(), end_kind: 'timeout', error: `it ran past the time limit of ${Math.round(taskTimeoutMs / 1000)} s, and was stopped`, seconds: elapsed() }) };
      }
      if (error instanceof TaskLost && browser.alive) {
        return { result: resultLine(task, browser, item.attempts, { ...partial(), end_kind: 'lost', error: error.message, seconds: elapsed() }) };
      }
      throw error;
    }
    const seconds = elapsed();
    const finish = end.end;
    const fields = {
      answer: finish.kind === 'done' ? (finish.data !== undefined ? finish.data : finish.text) : null,
      end_kind: finish.kind,
      steps: end.steps,
      input_tokens: end.usage?.input_tokens ?? 0,
      cached_tokens: end.usage?.cached_input_tokens ?? 0,
      output_tokens: end.usage?.output_tokens ?? 0,
      cost_usd: typeof end.cost_usd === 'number' ? end.cost_usd : null,
      seconds,
      error: finish.kind === 'done' ? null : endText(finish),
    };
    let success = finish.kind === 'done' && finish.success === true;
    if (finish.kind === 'done') {
      const unmet = unmetExpectation(task, finish)
        ?? (success && task.expectUrlText ? await unmetUrlText(browser.context, task.expectUrlText) : null);
      if (unmet) {
        success = false;
        fields.error = `expectation not met: ${unmet}`;
      }
    }
    return { result: resultLine(task, browser, item.attempts, { ...fields, success }) };
  } catch (error) {
    // Anything else is the browser's: gone, crashed, or no longer answering.
    const why = error?.message?.split('\n')[0] ?? String(error);
    browser.lost(/closed|disconnected|crashed/i.test(why) ? 'its connection closed' : why);
    return { lost: why };
  } finally {
    if (started && !stopping()) await closeTaskTabs(browser, tabs);
  }
}

/**
 * Runs `tasks` in `browsers` (from useBrowser); each result goes to `write(result)` as soon as
 * its task ends. Options: `confirm` (ask|deny|allow), `taskTimeoutMs`, `pollMs`, `progress`
 * (a Progress), `log(line)` (where notes go without a Progress: stderr), `stopping()` (true
 * once the run is being interrupted). Resolves to {results, notRun (tasks no browser could
 * run), interrupted}.
 */
export async function runBatch(tasks, browsers, {
  write, confirm = 'deny', taskTimeoutMs = DEFAULT_TASK_TIMEOUT_S * 1000, pollMs = 200, progress = null,
  log = (line) => process.stderr.write(`${line}\n`), stopping = () => false,
}) {
  const queue = tasks.map((task) => ({ task, attempts: 0, waitingSince: null }));
  const results = [];
  const interrupted = [];
  const givenUp = [];
  let wake = null;
  const changed = () => { wake?.(); };
  const say = (text) => (progress ? progress.note(text) : log(text));
  const asked = consentAnswers(confirm, {
    write: (text) => (progress ? progress.write(text) : process.stderr.write(text)),
    label: (consent) => `[${consent.batchId}] `,
  });
  const options = {
    taskTimeoutMs,
    pollMs,
    stopping,
    decide: async (item, consent, keepAwake, until) => {
      if (confirm !== 'ask') return asked(consent, keepAwake, until);
      progress?.pause();
      try {
        return await asked({ ...consent, batchId: item.task.id }, keepAwake, until);
      } finally {
        progress?.resume();
      }
    },
    onConsent: (item, consent, answer, by, answered) => {
      const taken = answered?.type === 'accepted' ? '' : ` (the answer was not taken: ${answered?.message ?? JSON.stringify(answered)})`;
      say(`[${item.task.id}] asked: ${consent.act} — ${SAID[answer]} by ${by}${taken}`);
    },
    onStarted: (item, browser) => {
      browser.accepted += 1;
      item.accepted = true;
    },
  };

  const launch = (item, browser) => {
    item.attempts += 1;
    item.accepted = false;
    browser.running.add(item);
    progress?.update({ running: +1 });
    let written = null;
    const record = (result) => {
      write(result);
      results.push(result);
      written = result;
    };
    runOne(item, browser, options).then((outcome) => {
      if (item.accepted) browser.accepted -= 1;
      if (outcome.result) {
        record(outcome.result);
      } else if (outcome.interrupted) {
        interrupted.push(item.task);
      } else if (outcome.busy) {
        item.attempts -= 1;
        item.waitingSince ??= Date.now();
        // It takes fewer at once than it was given: as many as it runs now.
        const taking = Math.max(1, browser.accepted);
        if (browser.capacity > taking) {
          browser.capacity = taking;
          if (!browser.noted) {
            browser.noted = true;
            say(`${browser.name} runs ${taking} task${taking > 1 ? 's' : ''} at a time (it said: ${outcome.busy.message}); the others wait their turn.`);
          }
        }
        if (browser.accepted === 0) browser.busyUntil = Date.now() + 1_000;
        if (Date.now() - item.waitingSince > taskTimeoutMs) {
          record(resultLine(item.task, browser, item.attempts, { end_kind: 'refused', error: `no browser took it within ${Math.round(taskTimeoutMs / 1000)} s (${outcome.busy.message})` }));
        } else {
          queue.unshift(item);
        }
      } else if (outcome.unusable) {
        item.attempts -= 1;
        queue.unshift(item);
        browser.lost(`it refuses to run tasks: ${outcome.unusable}`);
      } else {
        // Its browser went away: another one runs it, unless it has been tried enough.
        if (item.attempts >= MAX_ATTEMPTS) {
          record(resultLine(item.task, browser, item.attempts, { end_kind: 'lost', error: `its browser went away ${item.attempts} times (last: ${outcome.lost})` }));
        } else {
          queue.unshift(item);
        }
      }
    }).catch((error) => {
      // A result that cannot be written stops the batch: nothing must be run and lost.
      givenUp.push(error);
    }).finally(() => {
      browser.running.delete(item);
      progress?.update({ running: -1, done: written });
      changed();
    });
  };

  for (;;) {
    if (givenUp.length) throw givenUp[0];
    if (!stopping()) {
      // Fill the browsers, the one with the fewest running first.
      for (;;) {
        const now = Date.now();
        const free = browsers
          .filter((b) => b.alive && b.running.size < b.capacity && b.busyUntil <= now)
          .sort((a, b) => a.running.size - b.running.size)[0];
        if (!free || !queue.length) break;
        launch(queue.shift(), free);
      }
    }
    const running = browsers.reduce((n, b) => n + b.running.size, 0);
    if (!running && (stopping() || !queue.length || !browsers.some((b) => b.alive))) break;
    await new Promise((resolve) => {
      wake = resolve;
      setTimeout(resolve, 500);
    });
    wake = null;
  }
  if (givenUp.length) throw givenUp[0];
  return { results, notRun: [...interrupted, ...queue.map((item) => item.task)], interrupted: stopping() };
}

// --- Progress and summary ---------------------------------------------------------------------

/** The progress line on stderr: rewritten in place on a terminal, one line per change
 * otherwise. */
export class Progress {
  constructor(total, stream = process.stderr) {
    this.total = total;
    this.stream = stream;
    this.tty = Boolean(stream.isTTY);
    this.done = 0;
    this.failed = 0;
    this.running = 0;
    this.last = '';
    this.shown = '';
    this.paused = 0;
  }

  update({ running = 0, done = null }) {
    this.running += running;
    if (done) {
      this.done += 1;
      if (!done.success) this.failed += 1;
      this.last = `${done.id} ${done.success ? '✓' : '✗'} ${done.seconds.toFixed(1)} s${done.success ? '' : ` (${done.end_kind ?? 'error'})`}`;
    }
    this.render();
  }

  line() {
    return `[${this.done}/${this.total} done, ${this.running} running, ${this.failed} failed]${this.last ? ` ${this.last}` : ''}`;
  }

  render() {
    if (this.paused) return;
    const line = this.line();
    if (line === this.shown) return;
    this.shown = line;
    if (this.tty) {
      const width = this.stream.columns || 100;
      this.stream.write(`\r\x1b[K${line.slice(0, width - 1)}`);
    } else {
      this.stream.write(`${line}\n`);
    }
  }

  /** A line of its own (above the progress line on a terminal). */
  note(text) {
    if (this.tty && this.shown && !this.paused) this.stream.write('\r\x1b[K');
    this.stream.write(`${text}\n`);
    if (this.tty && !this.paused) {
      this.shown = '';
      this.render();
    }
  }

  /** Text as it is (a question to the person). */
  write(text) {
    this.stream.write(text);
  }

  pause() {
    if (this.paused++ === 0 && this.tty && this.shown) this.stream.write('\r\x1b[K');
  }

  resume() {
    if (--this.paused === 0) {
      if (this.tty) this.shown = '';
      this.render();
    }
  }

  end() {
    if (this.tty && this.shown) this.stream.write('\n');
    this.shown = '';
  }
}

const thousands = (n) => Math.round(n).toLocaleString('en-US');

/** The summary table, as text: success rate, totals, the slowest and the failed tasks. */
export function summaryText({ results, earlier = 0, skipped = 0, notRun = 0, wallSeconds = null, outFile = null }) {
  const rows = [];
  const row = (name, value) => rows.push(`  ${name.padEnd(15)}${value}`);
  const n = results.length;
  const ok = results.filter((r) => r.success === true).length;
  const sum = (key) => results.reduce((total, r) => total + (typeof r[key] === 'number' ? r[key] : 0), 0);
  const priced = results.filter((r) => typeof r.cost_usd === 'number');
  const parts = [`${n} with a result`];
  if (earlier) parts.push(`${earlier} of them from an earlier run`);
  if (skipped) parts.push(`${skipped} line${skipped > 1 ? 's' : ''} skipped (not a task)`);
  if (notRun) parts.push(`${notRun} not run`);
  row('tasks', parts.join('; '));
  row('success', n ? `${ok} of ${n} (${((100 * ok) / n).toFixed(1)}%)` : '—');
  row('steps', n ? `${thousands(sum('steps'))} (${(sum('steps') / n).toFixed(1)} a task)` : '0');
  row('input tokens', `${thousands(sum('input_tokens'))} (${thousands(sum('cached_tokens'))} from the provider's cache)`);
  row('output tokens', thousands(sum('output_tokens')));
  row('cost', priced.length
    ? `$${priced.reduce((t, r) => t + r.cost_usd, 0).toFixed(4)}${priced.length < n ? ` (${n - priced.length} task${n - priced.length > 1 ? 's' : ''} at an unknown price)` : ''}`
    : 'unknown (no price for the model)');
  row('task time', n ? `${sum('seconds').toFixed(1)} s in all, ${(sum('seconds') / n).toFixed(1)} s a task` : '—');
  if (wallSeconds !== null) {
    const ranNow = n - earlier;
    row('wall time', `${wallSeconds.toFixed(1)} s${ranNow > 0 && wallSeconds > 0 ? `, ${((60 * ranNow) / wallSeconds).toFixed(1)} tasks a minute` : ''}`);
  }
  // Lines of an earlier run are read as they are: a figure they lack counts as nothing.
  const seconds = (r) => (typeof r.seconds === 'number' ? r.seconds : 0);
  const slowest = [...results].sort((a, b) => seconds(b) - seconds(a)).slice(0, 5);
  if (slowest.length) row('slowest', slowest.map((r) => `${r.id} ${seconds(r).toFixed(1)} s`).join(', '));
  const failed = results.filter((r) => r.success !== true);
  for (const [i, r] of failed.slice(0, 10).entries()) {
    const why = r.error ?? (r.end_kind === 'done' ? `no success: ${String(typeof r.answer === 'string' ? r.answer : JSON.stringify(r.answer)).slice(0, 100)}` : r.end_kind);
    row(i === 0 ? 'failed' : '', `${r.id} (${r.end_kind ?? 'error'}): ${why}`);
  }
  if (failed.length > 10) row('', `… and ${failed.length - 10} more${outFile ? ` (see ${outFile})` : ''}`);
  return `Summary${outFile ? ` (${outFile})` : ''}\n${rows.join('\n')}\n`;
}

// --- The command ------------------------------------------------------------------------------

function parse(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        tasks: { type: 'string' },
        out: { type: 'string' },
        parallel: { type: 'string' },
        resume: { type: 'boolean' },
        'browser-endpoint': { type: 'string', multiple: true },
        confirm: { type: 'string' },
        profile: { type: 'string' },
        'task-timeout': { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError(`${error.message.split('\n')[0]}\n${USAGE}`);
  }
  if (!values.tasks) throw new UsageError(`--tasks names the task file.\n${USAGE}`);
  if (!values.out) throw new UsageError(`--out names the results file (one JSON line per task).\n${USAGE}`);
  if (path.resolve(values.out) === path.resolve(values.tasks)) throw new UsageError('--out must be another file than --tasks.');
  const parallel = values.parallel === undefined ? 1 : Number(values.parallel);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_PARALLEL) {
    throw new UsageError(`--parallel is a whole number from 1 to ${MAX_PARALLEL} (tasks at once in one browser), not ${JSON.stringify(values.parallel)}.`);
  }
  if (values.confirm !== undefined && !CONFIRM.includes(values.confirm)) throw new UsageError(`--confirm is ask, deny or allow, not ${JSON.stringify(values.confirm)}.`);
  const timeout = values['task-timeout'] === undefined ? DEFAULT_TASK_TIMEOUT_S : Number(values['task-timeout']);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError(`--task-timeout is a number of seconds, not ${JSON.stringify(values['task-timeout'])}.`);
  const endpoints = values['browser-endpoint'] ?? [];
  for (const endpoint of endpoints) {
    if (!/^(wss?|https?):\/\/./.test(endpoint)) throw new UsageError(`--browser-endpoint takes a ws:// (or http://) DevTools address, not ${JSON.stringify(endpoint)}.`);
  }
  if (endpoints.length && values.profile) throw new UsageError('--profile is for the browser launched here; with --browser-endpoint the browsers have their own.');
  return {
    tasksFile: values.tasks,
    out: values.out,
    parallel,
    resume: values.resume === true,
    endpoints,
    confirm: values.confirm ?? defaultConfirm(),
    profile: values.profile ?? null,
    taskTimeoutMs: timeout * 1000,
  };
}

/** Runs the command `argv` (the runner's arguments with --tasks); resolves to the exit status. */
export async function main(argv) {
  let options;
  let tasks;
  let skipped;
  try {
    options = parse(argv);
    ({ tasks, skipped } = readTaskFile(options.tasksFile));
  } catch (error) {
    console.error(error instanceof UsageError ? error.message : `The batch could not start: ${error.message}`);
    return 1;
  }
  for (const { line, why } of skipped) console.error(`${options.tasksFile}:${line}: skipped: ${why}`);
  if (!tasks.length) {
    console.error(`No line of ${options.tasksFile} is a task that can run (${skipped.length} skipped).`);
    return 1;
  }

  // What the results file already holds.
  const before = readResults(options.out);
  if (before.lines.length + before.bad.length > 0 && !options.resume) {
    console.error(`${options.out} already holds results: add --resume to run only the tasks it has no line for, or give another --out file.`);
    return 1;
  }
  for (const { line, why } of before.bad) console.error(`${options.out}:${line}: not a result line (${why}); kept as it is, and its task runs again`);
  const ids = new Set(tasks.map((t) => t.id));
  const earlier = new Map(before.lines.filter((r) => ids.has(r.id)).map((r) => [r.id, r]));
  const todo = tasks.filter((t) => !earlier.has(t.id));
  if (options.resume && earlier.size) console.error(`${earlier.size} of ${tasks.length} tasks already have a result in ${options.out}; running the other ${todo.length}.`);
  let results;
  try {
    results = openResults(options.out, before);
  } catch (error) {
    console.error(error.message);
    return 1;
  }

  let llm;
  try {
    llm = settingsFromEnv();
  } catch (error) {
    console.error(error.message);
    results.close();
    return 1;
  }

  const browsers = [];
  let temporaryProfile = null;
  let stopRequested = false;
  const progress = new Progress(todo.length);
  const onLost = (browser, why) => {
    // Ctrl-C reaches the browsers launched here too: their going is no news then.
    if (stopRequested) return;
    const unfinished = browser.running.size;
    const others = browsers.some((b) => b !== browser && b.alive);
    const after = !unfinished ? '' : others
      ? `; its ${unfinished} unfinished task${unfinished > 1 ? 's go' : ' goes'} to the other browsers`
      : `; no other browser is left for its ${unfinished} unfinished task${unfinished > 1 ? 's' : ''}`;
    progress.note(`Browser ${browser.name} lost: ${why}${after}.`);
  };
  const onSignal = (signal) => {
    if (stopRequested) {
      // A second one: leave at once (every line written is already on disk).
      process.stderr.write(`\n${signal} again: leaving without waiting for the browsers.\n`);
      process.exit(130);
    }
    stopRequested = true;
    progress.note(`${signal}: stopping the running tasks (they get no line; --resume runs them again).`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const began = performance.now();
  let outcome = null;
  let status = 1;
  try {
    if (todo.length) {
      if (options.endpoints.length) {
        const names = options.endpoints.map(endpointName);
        await Promise.all(options.endpoints.map(async (endpoint, i) => {
          const name = names.indexOf(names[i]) === i ? names[i] : `${names[i]}#${i + 1}`;
          let connected = null;
          try {
            connected = await connectEndpoint(endpoint);
            if (llm) await saveSettings(connected.context, connected.extensionId, llm);
            const disconnects = (fn) => connected.browser.on('disconnected', fn);
            browsers.push(await useBrowser(name, { ...connected, disconnects }, options.parallel, onLost));
          } catch (error) {
            await connected?.close();
            progress.note(`Browser ${name} cannot be used: ${error.message.split('\n')[0]}`);
          }
        }));
      } else {
        const profile = options.profile ?? mkdtempSync(path.join(os.tmpdir(), 'tabwright-batch-'));
        if (!options.profile) temporaryProfile = profile;
        const launched = await launchWithExtension(profile, { headless: true });
        try {
          if (llm) await saveSettings(launched.context, launched.extensionId, { ...llm, maxParallelTasks: options.parallel });
          else await saveMaxParallelTasks(launched.context, launched.extensionId, options.parallel);
          const disconnects = (fn) => launched.context.on('close', fn);
          browsers.push(await useBrowser('local', { ...launched, disconnects }, options.parallel, onLost));
        } catch (error) {
          await launched.close().catch(() => {});
          throw error;
        }
      }
      if (!browsers.length) throw new UsageError('No browser could be used; the tasks did not run.');
      progress.render();
      outcome = await runBatch(todo, browsers, {
        write: results.append,
        confirm: options.confirm,
        taskTimeoutMs: options.taskTimeoutMs,
        progress,
        stopping: () => stopRequested,
      });
      progress.end();
    } else {
      outcome = { results: [], notRun: [], interrupted: false };
    }
    const all = [...tasks.filter((t) => earlier.has(t.id)).map((t) => earlier.get(t.id)), ...outcome.results];
    process.stdout.write(summaryText({
      results: all, earlier: earlier.size, skipped: skipped.length, notRun: outcome.notRun.length,
      wallSeconds: (performance.now() - began) / 1000, outFile: options.out,
    }));
    if (outcome.notRun.length) {
      const why = outcome.interrupted ? 'the run was stopped' : 'no browser was left to run them';
      console.error(`${outcome.notRun.length} task${outcome.notRun.length > 1 ? 's' : ''} did not run (${why}): ${outcome.notRun.slice(0, 10).map((t) => t.id).join(', ')}${outcome.notRun.length > 10 ? ', …' : ''}. Run the same command with --resume to run them.`);
      status = 1;
    } else {
      status = all.every((r) => r.success === true) && !skipped.length ? 0 : 2;
    }
  } catch (error) {
    progress.end();
    console.error(error instanceof UsageError ? error.message : `The batch failed: ${error?.message ?? error}`);
    status = 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    results.close();
    await Promise.all(browsers.map((b) => within(b.close(), 15_000, '').catch(() => {})));
    if (temporaryProfile) rmSync(temporaryProfile, { recursive: true, force: true });
  }
  if (stopRequested) return 130;
  return status;
}
