// Every state a person meets in the side panel and the options page, walked in order: idle,
// asking, queued and pausing, ended with an answer, an order waiting for the person's yes and
// then denied, ended on an error, a task too long, the history, a past conversation, the skill
// form, the first-run setup, the options page. At each state `check(page, state)` runs (axe, a
// screenshot). Used in English and in Chinese (a11y.test.mjs, a11y-zh.test.mjs); the task texts
// are what a person types, so they stay.
import { runTask, runTaskToEnd, newConversation, manualConsents } from './harness.mjs';
import { answer } from './mock-llm.mjs';
import { findIndex, stepsDone } from './state.mjs';

/** Waits until the status pill says one of the messages named. */
function pillSays(panel, names) {
  return panel.waitForFunction(
    (keys) => keys.map((k) => chrome.i18n.getMessage(k)).includes(document.querySelector('#status').textContent),
    names,
  );
}

/** Walks the states with `world` (startWithMockLlm, settings saved), calling `check` at each. */
export async function walkPanelStates(world, check) {
  const { h } = world;
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await newConversation(panel);
  await check(panel, 'idle');

  let answered = null;
  world.setPolicy(async (state) => {
    if (!answered) return answer('Ask which account', [{ ask_human: { question: 'Which account?' } }]);
    await new Promise((r) => setTimeout(r, 700));
    if (/Wait a moment/.test(state) && !/Finish up/.test(state)) return answer('Finish up', [{ wait: { seconds: 0 } }]);
    return answer('Finish', [{ done: { text: '## Done\n\n**All** fine.', success: true } }]);
  });
  await runTask(panel, 'Sign in');
  await panel.locator('.question textarea').waitFor();
  await check(panel, 'asking');
  answered = true;
  await panel.fill('.question textarea', 'alice');
  await panel.press('.question textarea', 'Enter');
  await panel.fill('#task', 'Wait a moment');
  await panel.press('#task', 'Enter');
  await panel.locator('#queue .queued').waitFor();
  await panel.click('#pause');
  await pillSays(panel, ['statusPaused', 'statusPausing']);
  await check(panel, 'queued-and-pausing');
  await panel.click('#pause');
  await panel.locator('#log .final').nth(1).waitFor({ timeout: 30_000 });
  await check(panel, 'answered');


  // An order held for the person's yes (tests/e2e/fixtures/consent/shop.html), then denied.
  const shop = await h.openFixture('consent/shop.html');
  world.setPolicy((state) => (stepsDone(state) === 0
    ? answer('Place the order', [{ click: { index: findIndex(state, 'Place order') } }])
    : answer('Report', [{ done: { text: 'The order was not placed.', success: false } }])));
  await manualConsents(panel);
  await shop.bringToFront();
  await panel.bringToFront();
  const finals = await panel.locator('#log .final').count();
  await runTask(panel, 'Order the blue mug');
  await panel.locator('#log .consent .consent-choice').first().waitFor({ timeout: 30_000 });
  await check(panel, 'consent-asking');
  await panel.locator('#log .consent .consent-choice[data-answer="deny"]').click();
  await panel.locator('#log .final').nth(finals).waitFor({ timeout: 30_000 });
  // The decision in view (the chat scrolled to the task's end).
  await panel.locator('#log .consent.answered').last().evaluate((box) => box.scrollIntoView({ block: 'start' }));
  await check(panel, 'consent-answered');
  await panel.evaluate(() => { globalThis.tabwrightManualConsent = false; });
  await shop.close();

  world.setPolicy(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided.' } } }));
  await runTaskToEnd(panel, 'Try once more');
  await check(panel, 'error');
  await panel.fill('#task', 'x'.repeat(21_000));
  await panel.locator('#task-count.over').waitFor();
  await check(panel, 'too-long');
  await panel.fill('#task', '');
  world.setPolicy(null);

  await panel.click('#show-history');
  await panel.locator('.history-list .session').first().waitFor();
  await check(panel, 'history');
  await panel.locator('.session').first().locator('.session-open').click();
  await panel.locator('#past-log .final').first().waitFor();
  await check(panel, 'past');
  await panel.click('#past-skill');
  await panel.locator('#skill-form').locator('.skill-status, form').first().waitFor();
  await check(panel, 'skill-form');
  await panel.locator('#skill-form').locator('button, input').first().focus();
  await panel.keyboard.press('Escape');
  await panel.click('#past-back');
  await panel.click('#history-back');

  // Two tasks at once, each in a new tab: the list of tasks at the top.
  world.setPolicy(async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    return answer('Look around', [{ scroll: { down: true, pages: 0.5 } }]);
  });
  await newConversation(panel);
  await panel.check('#new-tab');
  for (const task of ['Compare the first shop', 'Compare the second shop']) {
    await runTask(panel, task);
    await panel.waitForFunction(() => document.querySelector('#task').value === '');
  }
  await panel.locator('#task-list .task-switch').nth(1).waitFor();
  await check(panel, 'two-tasks');
  await panel.evaluate(async () => {
    const ask = (request) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, ...request } });
    const { tasks } = await ask({ type: 'get_status' });
    for (const task of tasks.filter((t) => t.status === 'running')) await ask({ type: 'stop_task', task_id: task.task_id });
  });
  await panel.locator('#task-list').waitFor({ state: 'hidden', timeout: 30_000 });
  await panel.uncheck('#new-tab');
  world.setPolicy(null);

  // The first-run setup: the model taken away for a moment, then given back.
  const saved = await panel.evaluate(async () => (await chrome.storage.local.get('settings')).settings);
  await panel.evaluate((s) => chrome.storage.local.set({ settings: { ...s, llm: { ...s.llm, model: '' } } }), saved);
  await panel.reload();
  await panel.locator('#setup-view form').waitFor();
  await check(panel, 'setup');
  await panel.evaluate((s) => chrome.storage.local.set({ settings: s }), saved);
  await panel.locator('#chat-view:not([hidden])').waitFor();

  const options = await h.context.newPage();
  await options.setViewportSize({ width: 720, height: 1200 });
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await options.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  await check(options, 'options');
  await options.close();
  return panel;
}
