// Task history: each step of a task is written to IndexedDB as it happens, with the model's
// thoughts, actions and results, page, timings, tokens, cost and the screenshot when one was
// taken; it outlives the service worker (stopped mid-task and after), is read by a page opened
// afterwards, and downloads as JSON from the panel. Events recorded twice change nothing, and a
// failing IndexedDB does not stop a task.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startWithMockLlm, runTask, runTaskToEnd } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex, field, stepsDone, findField } from './lib/state.mjs';

// The mock answers with the log-in model below unless a test sets its own policy; while a gate
// is open, it holds the third step's answer until the gate is released.
let world;
let h;
let llm;

/** Logs in as alice in four steps, each found by the text of the page: fill the form, take a
 * screenshot, submit, report. */
async function loginWithScreenshot(state) {
  const done = stepsDone(state);
  if (world.gate() && done === 2) await world.gate().promise;
  if (field(state, 'Title').startsWith('Welcome, alice')) {
    return answer('Report the welcome', [{ done: { text: 'Signed in as alice.', success: true } }]);
  }
  if (done === 0) {
    return answer('Fill in the form', [
      { input: { index: findField(state, 'Username'), text: 'alice', clear: true } },
      { input: { index: findField(state, 'Password'), text: 'hunter2', clear: true } },
    ]);
  }
  if (done === 1) return answer('Look at the filled form', [{ screenshot: {} }]);
  return answer('Submit the form', [{ click: { index: findIndex(state, />Submit$/) } }]);
}

before(async () => {
  world = await startWithMockLlm(loginWithScreenshot);
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

/** Calls the history module in an extension page: `history[name](...args)`. */
function historyCall(page, name, ...args) {
  return page.evaluate(async ([name, args]) => {
    const history = await import('/history-store.js');
    return history[name](...args);
  }, [name, args]);
}

/** Waits until the history holds task `taskId` as ended (written by the worker a moment after
 * the panel shows the end). */
async function untilRecordedAsEnded(page, taskId) {
  for (let tries = 0; ; tries++) {
    const kept = await historyCall(page, 'getTask', taskId);
    if (kept?.task.end) return kept;
    assert.ok(tries < 200, `the history never recorded the end of ${taskId}: ${JSON.stringify(kept?.task)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const withoutScreenshot = ({ screenshot, ...rest }) => rest;

test('every step is in the history once, with its page, thoughts, actions, timings, tokens and screenshot, after the worker was stopped mid-task and after; Export JSON downloads it all', async () => {
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const held = world.openGate();
  await runTask(panel, 'Sign in as alice with password hunter2');
  // Stop the worker while the third step waits for the model: steps 1 and 2 are done.
  while (llm.requests.length < 3) await new Promise((r) => setTimeout(r, 20));
  await panel.locator('.step .goal', { hasText: 'Look at the filled form' }).waitFor({ timeout: 30_000 });
  const taskId = await panel.locator('.task-tools .export').getAttribute('data-task-id');
  assert.match(taskId, /^task-\d+$/);
  let before;
  for (let tries = 0; !(before?.steps.length === 2); tries++) {
    assert.ok(tries < 200, `the first two steps never reached the history: ${JSON.stringify(before?.steps.map((s) => s.step))}`);
    await new Promise((r) => setTimeout(r, 50));
    before = await historyCall(panel, 'getTask', taskId);
  }
  assert.equal(before.task.running, true);
  await h.screenshot(panel, 'history-running-panel');
  await h.stopWorker(panel);
  world.closeGate();
  held.release();
  await panel.locator('.final').waitFor({ timeout: 60_000 });
  assert.match(await panel.locator('.final').innerText(), /Signed in as alice\./);
  await panel.locator('.restored').waitFor();
  await untilRecordedAsEnded(panel, taskId);

  // The worker goes away again; a page opened afterwards reads what was kept.
  await h.stopWorker(panel);
  await panel.close();
  const reader = await h.openPanel();
  const tasks = await historyCall(reader, 'listTasks');
  assert.equal(tasks.filter((t) => t.task_id === taskId).length, 1, 'the task is listed once');
  assert.equal(tasks[0].task_id, taskId, 'newest first');
  assert.equal(tasks[0].steps, undefined, 'the list carries no steps');
  const { task, steps } = await historyCall(reader, 'getTask', taskId);
  assert.equal(task.task, 'Sign in as alice with password hunter2');
  assert.equal(task.model, 'mock-model');
  assert.equal(task.started_at, before.task.started_at, 'the restart did not start the task over');
  assert.ok(task.finished_at >= task.started_at);
  assert.equal(task.running, false);
  assert.deepEqual(task.end, { kind: 'done', text: 'Signed in as alice.', success: true });
  assert.deepEqual(task.restored, { step: 3, steps_kept: 2, reason: "Chrome stopped Tabwright's service worker while the task ran" });
  assert.equal(task.step_count, 4);

  assert.deepEqual(steps.map((s) => s.step), [1, 2, 3, 4], 'every step once, in order (step 3 as done again)');
  const goals = ['Fill in the form', 'Look at the filled form', 'Submit the form', 'Report the welcome'];
  const actions = [['input', 'input'], ['screenshot'], ['click'], ['done']];
  steps.forEach((s, i) => {
    assert.match(s.url, i < 3 ? /^http:\/\/127\.0\.0\.1:\d+\/login\.html$/ : /\/welcome\?user=alice$/, `step ${s.step} url`);
    assert.equal(s.title, i < 3 ? 'Sign in — Fixture Bank' : 'Welcome, alice', `step ${s.step} title`);
    assert.equal(s.output.next_goal, goals[i]);
    assert.equal(s.output.evaluation_previous_goal, 'Judged from the page.');
    assert.deepEqual(s.actions.map((a) => a.name), actions[i]);
    for (const a of s.actions) {
      assert.equal(a.result.is_error, false, `${a.description}: ${a.result.message}`);
      assert.ok(a.result.message.length > 0 && a.description.length > 0);
    }
    for (const phase of ['observe_ms', 'llm_ms', 'act_ms']) {
      assert.ok(Number.isFinite(s.timings[phase]) && s.timings[phase] >= 0, `step ${s.step} ${phase}: ${s.timings[phase]}`);
    }
    assert.ok(s.usage.input_tokens > 0 && s.usage.output_tokens > 0, `step ${s.step} tokens`);
    assert.equal(s.error, null);
  });
  assert.equal(steps[0].actions[1].params.text, '•••', 'the password is kept masked, as the core recorded it');
  assert.match(steps[2].actions[0].result.message, /welcome/);
  assert.match(steps[1].screenshot?.png_base64 ?? '', /^iVBOR/, 'the step that took a screenshot keeps its PNG');
  assert.ok(steps[1].screenshot.width > 0 && steps[1].screenshot.height > 0);
  assert.deepEqual(steps.filter((s) => s.screenshot).map((s) => s.step), [2], 'no other step has one');
  const sum = (key) => steps.reduce((n, s) => n + (s.usage[key] ?? 0), 0);
  assert.deepEqual(
    { cached_input_tokens: 0, ...task.usage },
    { input_tokens: sum('input_tokens'), output_tokens: sum('output_tokens'), cached_input_tokens: sum('cached_input_tokens') },
  );

  // What was kept is what the core recorded (its saved log leaves screenshots out).
  const status = await reader.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  assert.equal(status.task_id, taskId);
  const core = status.events.filter((e) => e.type === 'step_finished').map((e) => e.record);
  assert.deepEqual(steps.map(withoutScreenshot), core.map(withoutScreenshot));

  // Export JSON in the panel, which shows the ended task again.
  const button = reader.locator('.final .export');
  await h.screenshot(reader, 'history-export-panel');
  assert.equal(await button.innerText(), 'Export JSON');
  const [download] = await Promise.all([reader.waitForEvent('download'), button.click()]);
  assert.equal(download.suggestedFilename(), `tabwright-task-${taskId.slice('task-'.length)}.json`);
  const exported = JSON.parse(await readFile(await download.path(), 'utf8'));
  assert.equal(exported.format, 'tabwright-task');
  assert.equal(exported.version, 1);
  assert.ok(!Number.isNaN(Date.parse(exported.exported_at)));
  assert.deepEqual(exported.task, task);
  assert.deepEqual(exported.steps, steps, 'every step, screenshot included');
  assert.equal(await reader.locator('#notice').isVisible(), false);
  await reader.close();
});

test('events recorded twice, replayed without screenshots or after a restart change nothing; a step done again replaces the first attempt', async () => {
  const page = await h.openPanel();
  const result = await page.evaluate(async () => {
    const history = await import('/history-store.js');
    const id = `replayed-${Date.now()}`;
    const shot = { png_base64: 'iVBORw0KGgoAAAANSUhEUg==', width: 2, height: 1 };
    const record = (step, goal, extra = {}) => ({
      step, tab_id: 7, url: `https://example.org/${step}`, title: `Page ${step}`,
      output: { evaluation_previous_goal: '', memory: '', next_goal: goal },
      actions: [{ name: 'click', description: `click [${step}]`, params: { index: step }, result: { message: 'Clicked.', is_error: false, done: null, navigated_to: null } }],
      error: null, usage: { input_tokens: 100 * step, output_tokens: 10 }, cost_usd: 0.001 * step,
      timings: { observe_ms: 5, llm_ms: 50, act_ms: 20 }, ...extra,
    });
    // Where the core says the task stands after each event (its TaskState), as it sends them.
    const started = { task: 'Click twice', model: 'm', max_steps: 10, conversation_id: id, replay: false, running: true, paused: false,
      restored: null, summary: null, end: null, usage: { input_tokens: 0, output_tokens: 0 }, cost_usd: null, unpriced_steps: 0, step_count: 0 };
    const afterOne = { ...started, usage: { input_tokens: 100, output_tokens: 10 }, cost_usd: 0.001, step_count: 1 };
    const afterTwo = { ...started, usage: { input_tokens: 300, output_tokens: 20 }, cost_usd: 0.003, step_count: 2 };
    const log = [
      [{ type: 'task_started', v: 1, task_id: id, task: 'Click twice', max_steps: 10, model: 'm' }, started],
      [{ type: 'step_started', v: 1, step: 1, max_steps: 10 }, started],
      [{ type: 'step_finished', v: 1, record: record(1, 'First', { screenshot: shot }) }, afterOne],
      [{ type: 'step_started', v: 1, step: 2, max_steps: 10 }, afterOne],
      [{ type: 'step_finished', v: 1, record: record(2, 'Second') }, afterTwo],
    ];
    const recorded = [];
    for (const [seq, [event, state]] of log.entries()) recorded.push(await history.recordEvent(id, seq, event, state));
    const first = await history.getTask(id);
    // A restarted worker's log: saved without screenshots, its seqs from the last saved point,
    // caught up with the state after all of it.
    const restored = { ...afterTwo, restored: { step: 3, steps_kept: 2, reason: 'stopped' } };
    const restart = [
      ...log.map(([e]) => (e.type === 'step_finished' ? { ...e, record: { ...e.record, screenshot: undefined } } : e)),
      { type: 'task_restored', v: 1, step: 3, steps_kept: 2, reason: 'stopped' },
    ];
    for (const [seq, [event, state]] of log.entries()) recorded.push(await history.recordEvent(id, seq, event, state));
    for (const [seq, event] of restart.entries()) recorded.push(await history.recordEvent(id, seq, event, restored));
    const replayed = await history.getTask(id);
    // Step 2 done again by the restarted worker (another answer), then the end, twice.
    const redone = { type: 'step_finished', v: 1, record: record(2, 'Second, again', { usage: { input_tokens: 300, output_tokens: 30 }, cost_usd: 0.01 }) };
    const afterRedone = { ...restored, usage: { input_tokens: 400, output_tokens: 40 }, cost_usd: 0.011, step_count: 2 };
    const end = { type: 'task_finished', v: 1, end: { kind: 'done', text: 'Clicked.', success: true }, steps: 2, usage: { input_tokens: 400, output_tokens: 40 }, cost_usd: 0.011 };
    const ended_ = { ...afterRedone, running: false, end: end.end };
    for (const [event, state] of [[redone, afterRedone], [end, ended_], [redone, ended_], [end, ended_]]) {
      recorded.push(await history.recordEvent(id, 9, event, state));
    }
    const ended = await history.getTask(id);
    const listed = (await history.listTasks()).filter((t) => t.task_id === id).length;
    const order = (await history.listTasks()).map((t) => t.started_at);
    // Not an event: refused and reported, not thrown.
    const refused = await history.recordEvent(id, 10, { nothing: true });
    const failure = history.lastFailure();
    const deleted = await history.deleteTask(id);
    return { recorded, first, replayed, ended, listed, order, refused, failure, deleted, after: await history.getTask(id) };
  });
  assert.ok(result.recorded.every(Boolean), 'every event was recorded');
  const { first, replayed, ended } = result;
  assert.deepEqual(first.steps.map((s) => s.step), [1, 2]);
  assert.deepEqual(first.task.usage, { input_tokens: 300, output_tokens: 20 });
  assert.equal(first.task.step_count, 2);

  assert.deepEqual(replayed.steps, first.steps, 'the replays changed no step, and step 1 kept its screenshot');
  assert.equal(replayed.steps[0].screenshot.png_base64, 'iVBORw0KGgoAAAANSUhEUg==');
  assert.deepEqual({ ...replayed.task, restored: null }, first.task, 'only the restart was noted: the row is what the core said');
  assert.deepEqual(replayed.task.restored, { step: 3, steps_kept: 2, reason: 'stopped' });
  assert.equal(replayed.task.task, 'Click twice');

  assert.deepEqual(ended.steps.map((s) => s.step), [1, 2]);
  assert.equal(ended.steps[1].output.next_goal, 'Second, again');
  assert.equal(ended.task.step_count, 2);
  assert.deepEqual(ended.task.usage, { input_tokens: 400, output_tokens: 40 });
  assert.equal(ended.task.cost_usd, 0.011);
  assert.equal(ended.task.running, false);
  assert.equal(ended.task.started_at, first.task.started_at);
  assert.equal(result.listed, 1);
  assert.deepEqual(result.order, [...result.order].sort((a, b) => b - a), 'newest first');

  assert.equal(result.refused, false);
  assert.match(result.failure.message, /could not keep its task history[\s\S]*not a task event/);
  assert.equal(result.deleted, true);
  assert.equal(result.after, null);
  await page.close();
});

test('when the worker starts, the history catches up from the core\'s saved log and marks tasks nothing will end as interrupted', async () => {
  const page = await h.openPanel();
  const result = await page.evaluate(async () => {
    const history = await import('/history-store.js');
    const id = `caught-up-${Date.now()}`;
    const orphan = `orphan-${Date.now()}`;
    // A task an earlier worker left running: written as that worker would have, long ago.
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open(history.DB_NAME, history.DB_VERSION);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    await new Promise((resolve, reject) => {
      const tx = db.transaction('tasks', 'readwrite');
      tx.objectStore('tasks').put({ task_id: orphan, task: 'Left behind', model: '', max_steps: 5, started_at: 1, finished_at: null, running: true, paused: false, interrupted: false, restored: null, end: null, usage: { input_tokens: 0, output_tokens: 0 }, cost_usd: null, unpriced_steps: 0, step_count: 0 });
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    const record = { step: 1, tab_id: 1, url: 'https://example.org/', title: 'Example', output: null, actions: [], error: 'The page could not be read.', usage: { input_tokens: 0, output_tokens: 0 }, timings: { observe_ms: 1, llm_ms: 0, act_ms: 0 } };
    // The worker wrote the start and step 1 (with its screenshot), then was stopped.
    const running = { task: 'Read the page', model: 'm', max_steps: 5, conversation_id: id, replay: false, running: true, paused: false,
      restored: null, summary: null, end: null, usage: { input_tokens: 0, output_tokens: 0 }, cost_usd: null, unpriced_steps: 0, step_count: 0 };
    await history.recordEvent(id, 0, { type: 'task_started', v: 1, task_id: id, task: 'Read the page', max_steps: 5, model: 'm' }, running);
    await history.recordEvent(id, 1, { type: 'step_finished', v: 1, record: { ...record, screenshot: { png_base64: 'iVBORw0K', width: 1, height: 1 } } }, { ...running, step_count: 1 });
    // Its saved log had one more event, the end, that never reached the history.
    const events = [
      { type: 'task_started', v: 1, task_id: id, task: 'Read the page', max_steps: 5, model: 'm' },
      { type: 'step_finished', v: 1, record },
      { type: 'task_finished', v: 1, end: { kind: 'error', message: 'The tab was closed.' }, steps: 1, usage: { input_tokens: 0, output_tokens: 0 } },
    ];
    const state = { ...running, running: false, step_count: 1, end: events[2].end };
    const caughtUp = await history.catchUp([{ type: "status", v: 1, task_id: id, running: false, from: 0, events, state }]);
    return { caughtUp, kept: await history.getTask(id), orphan: (await history.getTask(orphan)).task };
  });
  assert.equal(result.caughtUp, true);
  assert.deepEqual(result.kept.task.end, { kind: 'error', message: 'The tab was closed.' });
  assert.equal(result.kept.task.running, false);
  assert.equal(result.kept.steps.length, 1);
  assert.equal(result.kept.steps[0].screenshot.png_base64, 'iVBORw0K', 'the replayed step kept its screenshot');
  assert.equal(result.orphan.running, false);
  assert.equal(result.orphan.interrupted, true);
  assert.equal(result.orphan.end, null);
  await page.close();
});

test('a task goes on when IndexedDB fails; Export JSON says why, and the history works again once the database does', async () => {
  world.setPolicy(() => answer('Finish', [{ done: { text: 'Finished without a history.', success: true } }]));
  const page = await h.openPanel();
  // A database from a "newer version": every open of version 1 fails (VersionError).
  await page.evaluate(async () => {
    await new Promise((resolve, reject) => {
      const del = indexedDB.deleteDatabase('tabwright');
      del.onsuccess = resolve;
      del.onerror = () => reject(del.error);
    });
    await new Promise((resolve, reject) => {
      const open = indexedDB.open('tabwright', 999);
      open.onsuccess = () => { open.result.close(); resolve(); };
      open.onerror = () => reject(open.error);
    });
  });
  try {
    await h.openFixture('login.html');
    const panel = await h.openPanel();
    assert.match(await runTaskToEnd(panel, 'Finish at once'), /Finished without a history\./);
    await panel.locator('.final .export').last().click();
    await panel.locator('#notice').waitFor();
    assert.match(await panel.locator('#notice').innerText(), /^Export JSON failed\. Could not read task task-\d+ from the history: the history database was made by a newer Tabwright \(VersionError/);
  } finally {
    await page.evaluate(() => new Promise((resolve, reject) => {
      const del = indexedDB.deleteDatabase('tabwright');
      del.onsuccess = resolve;
      del.onerror = () => reject(del.error);
    }));
  }
  const panel = await h.openPanel();
  assert.match(await runTaskToEnd(panel, 'Finish again'), /Finished without a history\./);
  const taskId = await panel.locator('.final .export').last().getAttribute('data-task-id');
  const kept = await untilRecordedAsEnded(page, taskId);
  assert.equal(kept.task.task, 'Finish again');
  assert.equal(kept.steps.length, 1);
  world.setPolicy(null);
  await page.close();
});
