// Schedules, in the browser: one made in the options page as a person would, its alarm rung
// with no side panel open, and the run seen where a person sees it (the page it worked on,
// the model's requests, the history marked "scheduled", the options page's last result); a
// failed run told by a notification; a run that meets an act needing the person's yes waits,
// says so by a notification, and never acts while unanswered; a run missed while the browser
// was closed runs exactly once when it opens. The mock model reads the state text the
// extension sends (the task's words, the field by its label, the button by its text).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, until, pageAt } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findField, findIndex, stepsDone, taskOfState as taskOf } from './lib/state.mjs';
import { seriousViolations } from './lib/axe.mjs';

let world;
let h;
let llm;


before(async () => {
  world = await startWithMockLlm(async (state) => {
    const task = taskOf(state);
    const done = stepsDone(state);
    // "Type <name> into the user name field": once, then report.
    const name = /^Type (\S+) into the user name field/.exec(task)?.[1];
    if (name) {
      if (done >= 1) return answer('Report', [{ done: { text: `Typed ${name}.`, success: true } }]);
      return answer(`Type ${name}`, [{ input: { index: findField(state, 'Username'), text: name, clear: true } }]);
    }
    if (task.startsWith('Order the blue mug')) {
      if (done === 0) return answer('Place the order', [{ click: { index: findIndex(state, 'Place order') } }]);
      return answer('Report', [{ done: { text: 'Ordered.', success: true } }]);
    }
    return answer('Give up', [{ done: { text: 'There is no weather on this page.', success: false } }]);
  });
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

/** The options page, once it shows what is stored. */
async function openOptions() {
  const page = await h.context.newPage();
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await page.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  return page;
}

/** The schedules as stored (chrome.storage.local), read from an extension page. */
const storedSchedules = (page) => page.evaluate(async () => (await chrome.storage.local.get('schedules')).schedules ?? []);

/** Schedule `id` as stored. */
async function storedSchedule(page, id) {
  return (await storedSchedules(page)).find((s) => s.id === id);
}

/** Adds a schedule through the core, as the options page's form sends it; its id. */
async function addSchedule(page, draft) {
  const reply = await page.evaluate((d) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'save_schedule', draft: d } }), draft);
  assert.equal(reply.type, 'schedules', JSON.stringify(reply));
  return reply.schedules.at(-1).id;
}

/** Its time has come: its next run is moved into the past (as when its alarm rings), then its
 * alarm is made to ring now. */
async function ringNow(page, id) {
  await page.evaluate(async (scheduleId) => {
    const { schedules } = await chrome.storage.local.get('schedules');
    for (const s of schedules) if (s.id === scheduleId) s.next_run_ms = Date.now() - 1_000;
    await chrome.storage.local.set({ schedules });
    await chrome.alarms.create(`tabwright-schedule:${scheduleId}`, { when: Date.now() + 50 });
  }, id);
}

/** The ids of the notifications shown. */
const notifications = (page) => page.evaluate(async () => Object.keys(await chrome.notifications.getAll()));

/** The core's list of tasks. */
const tasksSeenFrom = (page) => page.evaluate(async () => (await chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } })).tasks);

/** No side panel is open. */
async function closePanels() {
  for (const open of h.context.pages().filter((p) => p.url().endsWith('/panel/panel.html'))) await open.close();
}

test('a schedule made in the options page runs when its alarm rings, with no panel open, and is seen everywhere as scheduled', async () => {
  await closePanels();
  const options = await openOptions();
  assert.equal(await options.locator('#schedules .empty').innerText(), 'No schedules yet.');
  const loginUrl = `${h.fixtures.url}/login.html`;
  // As a person fills the form.
  await options.fill('#schedule-title', 'Morning sign-in');
  await options.selectOption('#schedule-what', 'task');
  await options.fill('#schedule-task', 'Type scheduled-alice into the user name field');
  await options.fill('#schedule-start-url', loginUrl);
  await options.selectOption('#schedule-when', 'weekdays');
  await options.fill('#schedule-at', '07:30');
  await options.check('#schedule-notify');
  // A fault first: the core says it beside the field.
  await options.fill('#schedule-title', ' ');
  await options.click('#schedule-save');
  await options.locator('#schedule-title-error:not(:empty)').waitFor();
  assert.equal(await options.locator('#schedule-title-error').innerText(), 'Give the schedule a title.');
  assert.equal(await options.getAttribute('#schedule-title', 'aria-invalid'), 'true');
  assert.deepEqual(await seriousViolations(options), [], 'the form with a fault marked');
  await options.fill('#schedule-title', 'Morning sign-in');
  await options.click('#schedule-save');
  const row = options.locator('#schedules li.schedule', { hasText: 'Morning sign-in' });
  await row.waitFor({ timeout: 10_000 });
  assert.equal(await options.locator('#schedule-status').innerText(), 'Schedule “Morning sign-in” added.');
  assert.equal(await options.inputValue('#schedule-title'), '', 'the form is ready for another');
  const shown = await row.innerText();
  assert.match(shown, /Task: Type scheduled-alice into the user name field \(on http:\/\/127\.0\.0\.1:\d+\/login\.html\)/);
  assert.match(shown, /Weekdays at 07:30 · next run /);
  assert.match(shown, /Not run yet\./);
  const [stored] = await storedSchedules(options);
  assert.equal(stored.title, 'Morning sign-in');
  assert.deepEqual(stored.when, { every: 'weekdays', at: '07:30' });
  assert.equal(stored.notify_success, true);
  const alarm = await options.evaluate((name) => chrome.alarms.get(name), `tabwright-schedule:${stored.id}`);
  assert.equal(alarm?.scheduledTime, stored.next_run_ms, 'its alarm is set for its next run');
  const nextRun = new Date(stored.next_run_ms);
  assert.deepEqual([nextRun.getHours(), nextRun.getMinutes()], [7, 30], 'at 07:30 local time');
  assert.ok(nextRun.getDay() >= 1 && nextRun.getDay() <= 5, 'on a weekday');
  assert.deepEqual(await seriousViolations(options), []);
  await options.locator('.schedules-section').scrollIntoViewIfNeeded();
  await h.screenshot(options, 'schedules-options');

  // Its time comes, with no panel open.
  const asked = llm.requests.length;
  const before = new Set(h.context.pages());
  await ringNow(options, stored.id);
  const site = await pageAt(h.context, loginUrl, { besides: before, timeout: 20_000 });
  const typed = await until(() => site.inputValue('input[placeholder=Username]'), (v) => v === 'scheduled-alice', 30_000);
  assert.equal(typed, 'scheduled-alice', "the page's effect");
  const ran = await until(() => storedSchedule(options, stored.id), (s) => s?.last_result, 30_000);
  assert.equal(ran.last_result.ok, true, JSON.stringify(ran));
  assert.equal(ran.last_result.summary, 'Typed scheduled-alice.');
  assert.equal(ran.run_task_id, undefined, 'the run is over');
  assert.ok(ran.next_run_ms > Date.now(), 'its next run is to come');
  const requests = llm.requests.slice(asked).map((r) => JSON.stringify(r.body));
  assert.ok(requests.length >= 2 && requests.every((body) => body.includes('scheduled-alice')), 'the model ran the task');
  // Asked for, the success is told.
  assert.ok((await until(() => notifications(options), (ids) => ids.includes(`tabwright-schedule-result:${stored.id}`))).includes(`tabwright-schedule-result:${stored.id}`));
  // The options list shows the last result.
  await row.locator('.schedule-last', { hasText: 'succeeded' }).waitFor({ timeout: 10_000 });
  assert.match(await row.locator('.schedule-last').innerText(), /^Last run .+: succeeded\. Typed scheduled-alice\.$/);
  await h.screenshot(options, 'schedules-options-after-run');

  // The history marks the conversation as scheduled, in the list and in the chat.
  const panel = await h.openPanel();
  await panel.click('#show-history');
  const conversation = panel.locator('.history-list .session', { hasText: 'scheduled-alice' }).first();
  await conversation.waitFor({ timeout: 10_000 });
  assert.match(await conversation.locator('.session-meta').innerText(), /scheduled/);
  await conversation.locator('.session-open').click();
  await panel.locator('#past-log .task-scheduled').waitFor({ timeout: 10_000 });
  assert.equal(await panel.locator('#past-log .task-scheduled').innerText(), 'Scheduled');
  await h.screenshot(panel, 'schedules-history');
  await panel.close();
  await site.close();
  await options.close();
});

test('a failing scheduled run is told by a notification; pause, run now and remove work from the list', async () => {
  await closePanels();
  const options = await openOptions();
  const id = await addSchedule(options, {
    title: 'Weather report',
    what: { kind: 'task', task: 'Report the weather of the day', start_url: `${h.fixtures.url}/login.html` },
    when: { every: 'hourly', minute: 15 },
  });
  await ringNow(options, id);
  const notice = `tabwright-schedule-result:${id}`;
  assert.ok((await until(() => notifications(options), (ids) => ids.includes(notice), 30_000)).includes(notice), 'the failure is told');
  const failed = await storedSchedule(options, id);
  assert.equal(failed.last_result.ok, false);
  assert.equal(failed.last_result.summary, 'There is no weather on this page.');
  const row = options.locator(`#schedules li.schedule[data-id="${id}"]`);
  await row.locator('.schedule-last.failed').waitFor({ timeout: 10_000 });
  assert.match(await row.locator('.schedule-last').innerText(), /did not succeed\. There is no weather on this page\./);
  // Pause, then resume.
  await row.locator('.schedule-pause').click();
  await options.locator(`#schedules li.schedule[data-id="${id}"] .schedule-when`, { hasText: 'paused' }).waitFor();
  assert.equal((await storedSchedule(options, id)).paused, true);
  assert.equal(await options.evaluate((name) => chrome.alarms.get(name), `tabwright-schedule:${id}`), undefined, 'no alarm while paused');
  await options.locator(`#schedules li.schedule[data-id="${id}"] .schedule-pause`, { hasText: 'Resume' }).click();
  await options.locator(`#schedules li.schedule[data-id="${id}"] .schedule-when`, { hasText: 'next run' }).waitFor();
  // Run now: a run at once (it fails again, and says so).
  const runs = (await tasksSeenFrom(options)).length;
  await options.locator(`#schedules li.schedule[data-id="${id}"] .schedule-run-now`).click();
  await until(() => tasksSeenFrom(options), (tasks) => tasks.length > runs, 10_000);
  await until(() => storedSchedule(options, id), (s) => s.last_result && s.run_task_id === undefined && s.last_result.at_ms > failed.last_result.at_ms, 30_000);
  // Remove asks once more.
  const remove = options.locator(`#schedules li.schedule[data-id="${id}"] .schedule-remove`);
  await remove.click();
  assert.equal(await remove.innerText(), 'Remove it?');
  await remove.click();
  await options.locator(`#schedules li.schedule[data-id="${id}"]`).waitFor({ state: 'detached' });
  assert.equal(await storedSchedule(options, id), undefined);
  assert.equal(await options.evaluate((name) => chrome.alarms.get(name), `tabwright-schedule:${id}`), undefined, 'its alarm went with it');
  await options.close();
});

test('a scheduled run that meets an act needing a yes waits, says so by a notification, and never acts while unanswered', async () => {
  await closePanels();
  const options = await openOptions();
  const shopUrl = `${h.fixtures.url}/consent/shop.html`;
  const id = await addSchedule(options, {
    title: 'Buy the mug',
    what: { kind: 'task', task: 'Order the blue mug', start_url: shopUrl },
    when: { every: 'daily', at: '06:00' },
  });
  const asked = llm.requests.length;
  const before = new Set(h.context.pages());
  await ringNow(options, id);
  const shop = await pageAt(h.context, shopUrl, { besides: before, timeout: 20_000 });
  const running = await until(() => storedSchedule(options, id), (s) => s?.run_task_id, 20_000);
  const waits = `tabwright-schedule-waits:${running.run_task_id}`;
  assert.ok((await until(() => notifications(options), (ids) => ids.includes(waits), 30_000)).includes(waits), 'the wait is told');
  assert.equal(await until(() => options.evaluate(() => chrome.action.getBadgeText({})), (v) => v === '!'), '!', 'and the badge says so');
  const status = await until(() => tasksSeenFrom(options), (tasks) => tasks.some((t) => t.task_id === running.run_task_id && t.status === 'waiting'));
  assert.ok(status.find((t) => t.task_id === running.run_task_id)?.scheduled, 'the list of tasks marks it scheduled');
  // Nobody answers: the order never reaches the shop, and the model is asked nothing more.
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal(await shop.locator('#status').innerText(), 'No order yet');
  assert.equal(llm.requests.length - asked, 1, 'the model was asked once, and waits with the task');
  assert.equal((await storedSchedule(options, id)).last_result, undefined, 'no result while it waits');
  await h.screenshot(shop, 'schedules-held-order');
  // The person stops it from the panel: still no order, and the notification goes.
  const stopped = await options.evaluate((taskId) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'stop_task', task_id: taskId } }), running.run_task_id);
  assert.equal(stopped.type, 'accepted');
  const ended = await until(() => storedSchedule(options, id), (s) => s?.last_result, 20_000);
  assert.equal(ended.last_result.ok, false);
  assert.equal(ended.last_result.summary, 'The run was stopped.');
  assert.equal(await shop.locator('#status').innerText(), 'No order yet', 'never ordered without the yes');
  assert.ok(!(await until(() => notifications(options), (ids) => !ids.includes(waits))).includes(waits), 'the wait is no longer told');
  await shop.close();
  await options.close();
});

test('a run missed while the browser was closed runs exactly once when it opens', async () => {
  await closePanels();
  let options = await openOptions();
  const loginUrl = `${h.fixtures.url}/login.html?missed`;
  const id = await addSchedule(options, {
    title: 'Every five minutes',
    what: { kind: 'task', task: 'Type missed-bob into the user name field', start_url: loginUrl },
    when: { every: 'minutes', n: 5 },
  });
  // Closed for three hours: 36 of its times passed.
  await options.evaluate(async (scheduleId) => {
    const { schedules } = await chrome.storage.local.get('schedules');
    for (const s of schedules) {
      if (s.id !== scheduleId) continue;
      s.created_ms -= 3 * 60 * 60_000;
      s.next_run_ms = Date.now() - 3 * 60 * 60_000;
    }
    await chrome.storage.local.set({ schedules });
  }, id);
  await options.close();
  const asked = llm.requests.length;
  await h.restart();
  // Nothing of the extension is opened: the browser's start wakes the worker, which runs it.
  const site = await pageAt(h.context, loginUrl, { timeout: 30_000 });
  assert.equal(await until(() => site.inputValue('input[placeholder=Username]'), (v) => v === 'missed-bob', 30_000), 'missed-bob');
  options = await openOptions();
  const ran = await until(() => storedSchedule(options, id), (s) => s?.last_result, 30_000);
  assert.equal(ran.last_result.ok, true, JSON.stringify(ran));
  assert.ok(ran.next_run_ms > Date.now() && ran.next_run_ms - Date.now() <= 5 * 60_000, 'its next time is the first one to come');
  // Long enough for a second run to have started, were there one.
  await new Promise((r) => setTimeout(r, 3_000));
  const tasks = (await tasksSeenFrom(options)).filter((t) => t.task.includes('missed-bob'));
  assert.equal(tasks.length, 1, `one run: ${JSON.stringify(tasks)}`);
  assert.ok(tasks[0].scheduled);
  const starts = llm.requests.slice(asked).filter((r) => JSON.stringify(r.body).includes('missed-bob') && !JSON.stringify(r.body).includes('Step 1:'));
  assert.equal(starts.length, 1, 'the model was asked for a first step once');
  assert.equal(h.context.pages().filter((p) => p.url() === loginUrl).length, 1, 'one tab for it');
  await options.close();
});
