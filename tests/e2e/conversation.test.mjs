// Steering a task from the side panel: pause and resume, and follow-up tasks that build on
// the earlier ones of the conversation until the user starts a new one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runTask, runTaskToEnd } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { startObserver } from './lib/observe.mjs';
import { seriousViolations } from './lib/axe.mjs';
import { findIndex, field, stepsDone, findField } from './lib/state.mjs';

let o;
let h;
let llm;
let policy = null;

before(async () => {
  o = await startObserver();
  ({ h, llm } = o);
  o.setPolicy((state, body) => policy(state, body));
});

after(async () => {
  await o?.close();
});

test('pause holds the task at the next step until resume, and the panel says so', async () => {
  policy = async (state) => {
    await new Promise((r) => setTimeout(r, 300)); // time to press Pause while the model thinks
    const done = stepsDone(state);
    if (done >= 3) return answer('Finish', [{ done: { text: `Finished after ${done} steps.`, success: true } }]);
    return answer(`Attempt ${done + 1}`, [{ input: { index: findField(state, 'Username'), text: `a${done + 1}`, clear: true } }]);
  };
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await runTask(panel, 'Type three times');
  await panel.locator('.step').first().waitFor();
  await panel.click('#pause');
  await panel.locator('#status', { hasText: 'Paused' }).waitFor({ timeout: 15_000 });
  assert.equal(await panel.locator('#pause').innerText(), 'Resume');
  await h.screenshot(panel, 'paused-panel');
  const asked = llm.requests.length;
  await new Promise((r) => setTimeout(r, 1_500));
  assert.equal(llm.requests.length, asked, 'nothing is asked while paused');
  await panel.click('#pause');
  await panel.locator('.final').waitFor({ timeout: 30_000 });
  assert.match(await panel.locator('.final').innerText(), /Finished after 3 steps\./);
  assert.ok(llm.requests.length > asked, 'the task went on after resume');
});

test('after resume the panel shows the task running and it can be paused again; a pause not yet taken can be taken back', async () => {
  policy = async (state) => {
    await new Promise((r) => setTimeout(r, 400)); // time to press Pause while the model thinks
    const done = stepsDone(state);
    if (done >= 6) return answer('Finish', [{ done: { text: `Finished after ${done} steps.`, success: true } }]);
    return answer(`Attempt ${done + 1}`, [{ input: { index: findField(state, 'Username'), text: `b${done + 1}`, clear: true } }]);
  };
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const status = panel.locator('#status');
  const pause = panel.locator('#pause');
  await panel.click('#new-conversation').catch(() => {}); // the log of the task before goes
  await runTask(panel, 'Type six times');
  await panel.locator('.step').first().waitFor();
  for (const round of [1, 2]) {
    await pause.click();
    await status.filter({ hasText: 'Paused' }).waitFor({ timeout: 15_000 });
    assert.equal(await pause.innerText(), 'Resume', `round ${round}: paused`);
    const steps = await panel.locator('.step').count();
    await pause.click();
    // The task runs again, and the panel says so: not paused, and Pause is offered again.
    await panel.waitForFunction((n) => document.querySelectorAll('.step').length > n, steps, { timeout: 15_000 });
    assert.doesNotMatch(await status.innerText(), /Paus/, `round ${round}: the pill follows the task`);
    assert.equal(await pause.innerText(), 'Pause', `round ${round}: it can be paused again`);
    assert.equal(await pause.isEnabled(), true);
  }
  // Pause asked for and taken back before the next step: the task never stops.
  await panel.evaluate(() => {
    const pill = document.querySelector('#status');
    window.sawPaused = false;
    new MutationObserver(() => { if (pill.textContent === 'Paused') window.sawPaused = true; })
      .observe(pill, { childList: true, characterData: true, subtree: true });
  });
  await pause.click();
  await status.filter({ hasText: 'Pausing' }).waitFor({ timeout: 5_000 });
  assert.equal(await pause.innerText(), 'Resume');
  await pause.click();
  await panel.waitForFunction(() => document.querySelector('#pause').textContent === 'Pause', null, { timeout: 5_000 });
  await panel.locator('.final').waitFor({ timeout: 30_000 });
  assert.match(await panel.locator('.final').innerText(), /Finished after 6 steps\./);
  assert.equal(await panel.evaluate(() => window.sawPaused), false, 'the pause taken back never took hold');
});

test('a task typed while one runs is queued in the worker, shown, cancellable, and runs next by itself, after a stop too', async () => {
  const taskOf = (state) => /<task>\n([\s\S]*?)\n<\/task>/.exec(state)[1];
  const ran = [];
  policy = async (state) => {
    await new Promise((r) => setTimeout(r, 500)); // a model that takes its time
    const task = taskOf(state);
    if (stepsDone(state) === 0) ran.push(task);
    if (stepsDone(state) >= 2) return answer('Finish', [{ done: { text: `Did: ${task}`, success: true } }]);
    return answer('Look around', [{ scroll: { down: true, pages: 0.5 } }]);
  };
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await panel.click('#new-conversation').catch(() => {});
  const queue = panel.locator('#queue .queued-task');
  const finals = panel.locator('#log .final');
  await runTask(panel, 'First task');
  await panel.locator('.step').first().waitFor();
  assert.equal(await panel.locator('#run').innerText(), 'Queue', 'Run queues while a task runs');
  for (const task of ['Second task', 'Third task']) {
    await panel.fill('#task', task);
    await panel.press('#task', 'Enter');
  }
  assert.deepEqual(await queue.allInnerTexts(), ['Second task', 'Third task'], 'shown in order');
  assert.equal(await panel.inputValue('#task'), '', 'the box is free for more');
  await h.screenshot(panel, 'queued-tasks');
  await panel.getByRole('button', { name: 'Cancel "Third task"' }).click();
  assert.deepEqual(await queue.allInnerTexts(), ['Second task']);
  await finals.nth(1).waitFor({ timeout: 30_000 });
  assert.match(await finals.nth(1).innerText(), /Did: Second task/, 'the queued task ran next, by itself');
  await panel.locator('#stop').waitFor({ state: 'hidden' });
  assert.deepEqual(ran, ['First task', 'Second task'], 'the cancelled one never ran');
  assert.equal(await queue.count(), 0);

  await runTask(panel, 'Fourth task');
  await panel.locator('.step').last().waitFor();
  await panel.fill('#task', 'Fifth task');
  await panel.press('#task', 'Enter');
  await panel.locator('#queue .queued-task', { hasText: 'Fifth task' }).waitFor();
  await panel.click('#stop');
  await finals.nth(2).waitFor({ timeout: 30_000 });
  // The queue is the worker's: a stop frees the tab, and the next task takes it.
  await finals.nth(3).waitFor({ timeout: 30_000 });
  assert.match(await finals.nth(3).innerText(), /Did: Fifth task/, 'the queued task ran after the stop, by itself');
  assert.deepEqual(ran, ['First task', 'Second task', 'Fourth task', 'Fifth task']);
  assert.equal(await queue.count(), 0);
});

test('favourite tasks: kept with the star, run in one click, blanks filled in a small form, removed, kept across a reload', async () => {
  const taskOf = (state) => /<task>\n([\s\S]*?)\n<\/task>/.exec(state)[1];
  const ran = [];
  policy = (state) => {
    ran.push(taskOf(state));
    return answer('Report', [{ done: { text: `Did: ${taskOf(state)}`, success: true } }]);
  };
  await h.openFixture('login.html');
  let panel = await h.openPanel();
  await panel.click('#new-conversation').catch(() => {});
  const chips = panel.locator('#favourites .favourite-use');
  for (const text of ['Find {item} under {price} euros', 'Read the page title']) {
    await panel.fill('#task', text);
    await panel.click('#save-favourite');
    await panel.locator('#favourites .favourite-use', { hasText: text }).waitFor();
    assert.equal(await panel.getAttribute('#save-favourite', 'aria-pressed'), 'true', 'the star shows it is kept');
  }
  assert.deepEqual(await chips.allInnerTexts(), ['Find {item} under {price} euros', 'Read the page title']);
  await panel.fill('#task', '');
  assert.deepEqual(await seriousViolations(panel), []);

  await chips.nth(1).click();
  await panel.locator('#log .final', { hasText: 'Did: Read the page title' }).waitFor({ timeout: 30_000 });

  await chips.first().click();
  const form = panel.locator('#favourites form');
  await form.getByLabel('item').fill('shoes');
  await form.getByLabel('price').fill('50');
  await h.screenshot(panel, 'favourite-blanks');
  assert.deepEqual(await seriousViolations(panel), []);
  await form.getByRole('button', { name: 'Run' }).click();
  await panel.locator('#log .final', { hasText: 'Did: Find shoes under 50 euros' }).waitFor({ timeout: 30_000 });
  assert.deepEqual(ran, ['Read the page title', 'Find shoes under 50 euros']);

  await panel.getByRole('button', { name: 'Remove the favourite "Read the page title"' }).click();
  await panel.reload();
  await panel.locator('#favourites .favourite-use').first().waitFor();
  assert.deepEqual(await panel.locator('#favourites .favourite-use').allInnerTexts(), ['Find {item} under {price} euros']);
  await panel.evaluate(() => chrome.storage.local.remove('favourites'));
});

test('a follow-up task is told the earlier tasks of the conversation; a new conversation starts fresh', async () => {
  const earlierOf = (state) => /<earlier_tasks>\n([\s\S]*?)<\/earlier_tasks>/.exec(state)?.[1] ?? null;
  const seen = [];
  policy = (state) => {
    seen.push(state);
    const task = /<task>\n([\s\S]*?)\n<\/task>/.exec(state)[1];
    if (task.startsWith('What is the page title')) return answer('Read it', [{ done: { text: `The title is ${field(state, 'Title')}.`, success: true } }]);
    return answer('Answer from the earlier task', [{ done: { text: earlierOf(state) ? 'I remember.' : 'Nothing earlier.', success: true } }]);
  };
  await h.openFixture('actions/history-a.html');
  const panel = await h.openPanel();
  await panel.click('#new-conversation').catch(() => {}); // a panel that replayed an earlier task
  assert.match(await runTaskToEnd(panel, 'What is the page title?'), /The title is Page A\./);
  assert.equal(await panel.locator('#new-conversation').isVisible(), true);
  const before = seen.length;
  assert.match(await runTaskToEnd(panel, 'And what did you just tell me?'), /I remember\./);
  const earlier = earlierOf(seen[before]);
  assert.match(earlier, /Task 1: What is the page title\?\n {2}Outcome: The title is Page A\./);
  assert.match(earlier, /Ended on: http:\/\/127\.0\.0\.1:\d+\/actions\/history-a\.html/);

  await panel.click('#new-conversation');
  const fresh = seen.length;
  assert.match(await runTaskToEnd(panel, 'And what did you just tell me?'), /Nothing earlier\./);
  assert.equal(earlierOf(seen[fresh]), null, 'a new conversation carries nothing over');
});
