// Several tasks at once, in one browser: each on its own tab, a slow model for one never
// stalling the other; stopping one leaves the other running; the worker stopped mid-way
// restores both; a queued task starts while no panel is open. The mock model reads the state
// the extension sends (the task's words, the field it finds by its label).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, until } from './lib/harness.mjs';
import { answer, newGate } from './lib/mock-llm.mjs';
import { stepsDone, findField, taskOfState as taskOf } from './lib/state.mjs';
import { saveMaxParallelTasks } from '../../scripts/lib/browser.mjs';

let world;
let h;
let llm;
/** Held answers, by the name a task types: the model waits on the gate before answering it. */
const gates = new Map();

/** The name a task types into the user name field: its last word. */
const nameIn = (task) => task.trim().split(/\s+/).at(-1);

before(async () => {
  world = await startWithMockLlm(async (state) => {
    const name = nameIn(taskOf(state));
    const done = stepsDone(state);
    // A slow model for the tasks named slow: each answer takes a second and a half.
    if (name.startsWith('slow')) await new Promise((r) => setTimeout(r, 1_500));
    await gates.get(name)?.promise;
    if (done >= 3) return answer('Finish', [{ done: { text: `${name} typed 3 times.`, success: true } }]);
    return answer(`Type ${name} ${done + 1}`, [{ input: { index: findField(state, 'Username'), text: `${name}${done + 1}`, clear: true } }]);
  });
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

/** Starts `task` on `site` from the panel, as a person would: the site in front, then the panel
 * beside it, the task typed, Enter. */
async function startOn(panel, site, task) {
  await site.bringToFront();
  await panel.bringToFront();
  await panel.fill('#task', task);
  await panel.press('#task', 'Enter');
  await until(() => panel.inputValue('#task'), (value) => value === '', 10_000);
  const notice = await panel.locator('#notice').innerText();
  if (notice) throw new Error(`the panel refused "${task}": ${notice}`);
}

/** The core's list of tasks, asked from an extension page. */
async function tasksSeenFrom(page) {
  const status = await page.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  return status.tasks;
}

const statusOf = (tasks, words) => tasks.find((task) => task.task.includes(words))?.status;

test('two tasks run at once on two tabs: a slow model for one never stalls the other, and each page gets its own', async () => {
  const slowSite = await h.openFixture('login.html');
  const fastSite = await h.openFixture('login.html');
  const panel = await h.openPanel();
  // The fast one waits for its first answer until the panel was looked at with both running.
  const looked = newGate();
  gates.set('quick', looked);
  await startOn(panel, slowSite, 'Type into the user name field the name slowpoke');
  await startOn(panel, fastSite, 'Type into the user name field the name quick');
  // The panel lists both while both run, and shows the last started.
  await panel.locator('#task-list .task-switch').nth(1).waitFor({ timeout: 10_000 });
  assert.equal(await panel.locator('#task-list .task-switch').count(), 2);
  await h.screenshot(panel, 'parallel-tasks-list');
  looked.release();
  gates.delete('quick');
  const fastDone = await until(() => fastSite.inputValue('input[placeholder=Username]'), (v) => v === 'quick3', 30_000);
  assert.equal(fastDone, 'quick3', 'the fast task typed its three times');
  const whenFastDone = await until(() => tasksSeenFrom(panel), (tasks) => statusOf(tasks, 'quick') === 'succeeded', 20_000);
  assert.equal(statusOf(whenFastDone, 'quick'), 'succeeded');
  assert.equal(statusOf(whenFastDone, 'slowpoke'), 'running', 'the slow one is still at work');
  assert.notEqual(await slowSite.inputValue('input[placeholder=Username]'), 'slowpoke3');
  await until(() => slowSite.inputValue('input[placeholder=Username]'), (v) => v === 'slowpoke3', 60_000);
  const end = await until(() => tasksSeenFrom(panel), (tasks) => statusOf(tasks, 'slowpoke') === 'succeeded', 30_000);
  assert.equal(statusOf(end, 'slowpoke'), 'succeeded');
  // Each task's tabs are its own.
  const [slow, fast] = ['slowpoke', 'quick'].map((words) => end.find((task) => task.task.includes(words)));
  assert.equal(slow.tabs.filter((tab) => fast.tabs.includes(tab)).length, 0, `${slow.tabs} / ${fast.tabs}`);
  // No model request mixed the two tasks.
  for (const request of llm.requests) {
    const words = taskOf(JSON.stringify(request.body.messages.map((m) => m.content)).replaceAll('\\n', '\n'));
    assert.ok(!(words.includes('slowpoke') && words.includes('quick')), words);
  }
  await panel.close();
});

test('stopping one task leaves the other running; the panel shows the task of the tab in front', async () => {
  const first = await h.openFixture('login.html');
  const second = await h.openFixture('login.html');
  const panel = await h.openPanel();
  gates.set('stopme', newGate());
  const goOn = newGate();
  gates.set('goon', goOn);
  await startOn(panel, first, 'Type into the user name field the name stopme');
  await startOn(panel, second, 'Type into the user name field the name goon');
  // The second is shown (started last); bringing the first tab to the front shows the first.
  await first.bringToFront();
  await panel.locator('#task-list .task-switch[aria-current="true"]', { hasText: 'stopme' }).waitFor({ timeout: 10_000 });
  await panel.locator('#log .bubble', { hasText: 'stopme' }).waitFor();
  await panel.click('#stop');
  gates.get('stopme').release();
  await until(() => tasksSeenFrom(panel), (tasks) => statusOf(tasks, 'stopme') === 'stopped', 20_000);
  assert.equal(statusOf(await tasksSeenFrom(panel), 'goon'), 'running', 'the other goes on');
  goOn.release();
  const end = await until(() => tasksSeenFrom(panel), (tasks) => statusOf(tasks, 'goon') === 'succeeded', 30_000);
  assert.equal(statusOf(end, 'goon'), 'succeeded');
  assert.equal(await second.inputValue('input[placeholder=Username]'), 'goon3');
  gates.clear();
  await panel.close();
});

test('the worker stopped while two tasks run: both go on from where they were and finish', async () => {
  const first = await h.openFixture('login.html');
  const second = await h.openFixture('login.html');
  const panel = await h.openPanel();
  const held = newGate();
  gates.set('alpha', held);
  gates.set('beta', held);
  await startOn(panel, first, 'Type into the user name field the name alpha');
  await startOn(panel, second, 'Type into the user name field the name beta');
  await until(() => tasksSeenFrom(panel), (tasks) => ['alpha', 'beta'].every((w) => statusOf(tasks, w) === 'running'), 10_000);
  await h.stopWorker(panel);
  held.release();
  gates.clear();
  // Any request wakes the worker; it restores both tasks.
  const end = await until(
    () => tasksSeenFrom(panel),
    (tasks) => ['alpha', 'beta'].every((w) => statusOf(tasks, w) === 'succeeded'),
    60_000,
  );
  assert.deepEqual(['alpha', 'beta'].map((w) => statusOf(end, w)), ['succeeded', 'succeeded'], JSON.stringify(end));
  assert.equal(await first.inputValue('input[placeholder=Username]'), 'alpha3');
  assert.equal(await second.inputValue('input[placeholder=Username]'), 'beta3');
  for (const words of ['alpha', 'beta']) {
    const id = end.find((task) => task.task.includes(words)).task_id;
    const status = await panel.evaluate((taskId) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status', task_id: taskId } }), id);
    assert.equal(status.task_id, id);
    assert.ok(status.events.some((e) => e.type === 'task_restored'), `${words} was restored`);
    assert.equal(status.events.filter((e) => e.type === 'task_started').length, 1, `${words}: its own log`);
  }
  await panel.close();
});

test('a queued task starts by itself when a place frees, with no panel open', async () => {
  const first = await h.openFixture('login.html');
  const second = await h.openFixture('login.html');
  const panel = await h.openPanel();
  await saveMaxParallelTasks(h.context, h.extensionId, 1);
  const held = newGate();
  gates.set('firstone', held);
  await startOn(panel, first, 'Type into the user name field the name firstone');
  await startOn(panel, second, 'Type into the user name field the name queuedone');
  await panel.locator('#queue .queued-task', { hasText: 'queuedone' }).waitFor({ timeout: 10_000 });
  assert.equal(statusOf(await tasksSeenFrom(panel), 'queuedone'), 'queued');
  await h.screenshot(panel, 'parallel-tasks-queued');
  await panel.close();
  held.release();
  gates.clear();
  // Nothing of the extension is open: the worker starts the queued task itself.
  const typed = await until(() => second.inputValue('input[placeholder=Username]'), (v) => v === 'queuedone3', 60_000);
  assert.equal(typed, 'queuedone3');
  assert.equal(await first.inputValue('input[placeholder=Username]'), 'firstone3');
  const reopened = await h.openPanel();
  const end = await until(() => tasksSeenFrom(reopened), (tasks) => statusOf(tasks, 'queuedone') === 'succeeded', 20_000);
  assert.equal(statusOf(end, 'queuedone'), 'succeeded');
  await saveMaxParallelTasks(h.context, h.extensionId, null);
  await reopened.close();
});
