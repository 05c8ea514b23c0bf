// The person's yes, as they give it: an act that cannot be undone (an order) waits in the side
// panel with what it is and why it waits, and reaches the page only once allowed; a "Deny"
// reaches the model instead. With no panel open the toolbar badge says a task waits, and a
// panel opened then shows the question with its buttons. A site answered "Always" is kept in
// the settings, where the options page lists it and takes it off again; the options page keeps
// the choice of what happens on other sites.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startWithMockLlm, runTask, newConversation, manualConsents, OUTPUT_DIR, until } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex, stepsDone } from './lib/state.mjs';
import { seriousViolations } from './lib/axe.mjs';

let world;
let h;
let llm;

before(async () => {
  world = await startWithMockLlm(() => answer('Finish', [{ done: { text: 'Finished.', success: true } }]));
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

const NO_ORDER = 'No order yet';
const ORDERED = /^Order placed: #\d+$/;

/** A model that orders: it clicks "Place order" (found by its text in the state) once; once the
 * page says the order is placed, or after its click came back, it reports. `states` gets every
 * state text it was sent; `hold`, when given, is awaited before the click is answered. */
function orderingModel(states, hold = null) {
  return async (state) => {
    states.push(state);
    if (/Order placed: #\d+/.test(state)) return answer('Report', [{ done: { text: 'Ordered.', success: true } }]);
    if (stepsDone(state) === 0) {
      await hold?.();
      return answer('Place the order', [{ click: { index: findIndex(state, 'Place order') } }]);
    }
    return answer('Report', [{ done: { text: 'The order was not placed.', success: false } }]);
  };
}

let hadTask = false;

/** Opens the shop and a panel beside it, on a fresh conversation. */
async function shopAndPanel() {
  const shop = await h.openFixture('consent/shop.html');
  const panel = await h.openPanel();
  await manualConsents(panel);
  // A panel opens on the last task (once it has heard from the worker): start afresh.
  if (hadTask) await panel.locator('#new-conversation').waitFor({ timeout: 10_000 });
  await newConversation(panel);
  hadTask = true;
  await shop.bringToFront();
  await panel.bringToFront();
  return { shop, panel };
}

/** The badge text of the toolbar button, as an extension page reads it. */
const badgeOf = (page) => page.evaluate(() => chrome.action.getBadgeText({}));


test('an order waits in the panel with what it is and why; nothing reaches the page, and Deny goes back to the model', async () => {
  const states = [];
  world.setPolicy(orderingModel(states));
  const { shop, panel } = await shopAndPanel();
  await runTask(panel, 'Order the blue mug');
  const box = panel.locator('#log .consent').last();
  await box.locator('.consent-choice').first().waitFor({ timeout: 30_000 });

  assert.match(await box.locator('.consent-act').innerText(), /Place order/, 'the act names the button');
  assert.match(await box.locator('.consent-why').innerText(), /order/i, 'and says why it waits');
  assert.deepEqual(await box.locator('.consent-choice').allInnerTexts(),
    ['Allow', 'Allow such acts on 127.0.0.1 for this task', 'Deny'], 'a button per choice, worded for an act');
  assert.equal(await box.getAttribute('role'), 'alertdialog');
  assert.equal(await panel.evaluate(() => /** @type {HTMLElement} */ (document.activeElement)?.dataset.answer), 'allow_once',
    'the keyboard is on the first answer');
  assert.equal(await panel.locator('#status').innerText(), 'Waiting for your answer');
  assert.deepEqual(await seriousViolations(panel), []);
  await h.screenshot(panel, 'consent-asking');

  // The task waits: the click has not reached the page, and nothing more is asked of the model.
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(await shop.locator('#status').innerText(), NO_ORDER);
  assert.equal(states.length, 1, 'the model is not asked again while the task waits');

  await panel.keyboard.press('Tab');
  await panel.keyboard.press('Tab');
  await panel.keyboard.press('Enter'); // Deny, from the keyboard
  await box.locator('.consent-decision').waitFor();
  assert.equal(await box.locator('.consent-decision').innerText(), 'Denied');
  assert.equal(await box.locator('button').count(), 0, 'the buttons make way for the decision');
  await panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
  assert.equal(await shop.locator('#status').innerText(), NO_ORDER, 'a denied click never reaches the page');
  assert.ok(states.length >= 2, 'the model was asked again');
  const results = /<last_step_results>\n([\s\S]*?)<\/last_step_results>/.exec(states[1])?.[1] ?? '';
  assert.match(results, /^click: The person did not allow this: click Place order/m,
    'the next request tells the model the person said no');
  await h.screenshot(panel, 'consent-denied');

  // The history keeps what was asked and answered: the past conversation and its report say it.
  await panel.click('#show-history');
  await panel.locator('.history-list .session').first().locator('.session-open').click();
  const past = panel.locator('#past-log .consent');
  await past.first().waitFor();
  assert.match(await past.locator('.consent-act').innerText(), /Place order/);
  assert.equal(await past.locator('.consent-decision').innerText(), 'Denied');
  assert.equal(await past.locator('button').count(), 0, 'nothing to answer in a past conversation');
  const report = await panel.evaluate(async () => {
    const { getSession, listSessions } = await import('../history-store.js');
    const { sessionReportHtml } = await import('./report.js');
    const [latest] = await listSessions('');
    return sessionReportHtml(await getSession(latest.conversation_id));
  });
  assert.match(report, /<div class="consent held_act">.*Place order.*<p class="decision">Denied<\/p><\/div>/s);
  await panel.close();
});

test('Allow lets the order through', async () => {
  const states = [];
  world.setPolicy(orderingModel(states));
  const { shop, panel } = await shopAndPanel();
  await runTask(panel, 'Order the blue mug');
  const box = panel.locator('#log .consent').last();
  await box.locator('.consent-choice').first().waitFor({ timeout: 30_000 });
  assert.equal(await shop.locator('#status').innerText(), NO_ORDER);
  await box.getByRole('button', { name: 'Allow', exact: true }).click();
  await box.locator('.consent-decision').waitFor();
  assert.equal(await box.locator('.consent-decision').innerText(), 'Allowed');
  await panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
  assert.match(await shop.locator('#status').innerText(), ORDERED);
  assert.match(await panel.locator('#log .final').last().innerText(), /Ordered\./);
  await panel.close();
});

test('with the panel closed the toolbar badge says a task waits; a panel opened then answers it, and the badge goes', async () => {
  const states = [];
  let release;
  const held = new Promise((r) => { release = r; });
  world.setPolicy(orderingModel(states, () => held));
  // No other panel is open (the worker notifies only when none is).
  for (const open of h.context.pages().filter((p) => p.url().endsWith('/panel/panel.html'))) await open.close();
  const { shop, panel } = await shopAndPanel();
  await runTask(panel, 'Order the blue mug');
  await panel.locator('#log .step').last().waitFor();
  await panel.close();
  const page = await h.context.newPage();
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  assert.equal(await badgeOf(page), '', 'no badge before anything is asked');

  release();
  assert.equal(await until(() => badgeOf(page), (v) => v === '!', 30_000), '!', 'the badge says the task waits');
  const waiting = 'Tabwright is waiting for your answer';
  assert.equal(await until(() => page.evaluate(() => chrome.action.getTitle({})), (v) => v === waiting), waiting);
  // The badge and the notification are made one after the other: the notification may come a
  // moment after the badge.
  const notified = () => page.evaluate(async () => 'tabwright-waiting' in await chrome.notifications.getAll());
  assert.equal(await until(notified, (v) => v === true), true, 'a notification says so too');
  assert.equal(await shop.locator('#status').innerText(), NO_ORDER);

  const reopened = await h.openPanel();
  await manualConsents(reopened);
  const box = reopened.locator('#log .consent:not(.answered)');
  await box.locator('.consent-choice').first().waitFor({ timeout: 10_000 });
  assert.match(await box.locator('.consent-act').innerText(), /Place order/);
  assert.equal(await reopened.locator('#status').innerText(), 'Waiting for your answer');
  await box.getByRole('button', { name: 'Allow', exact: true }).click();
  assert.equal(await until(() => badgeOf(page), (v) => v === ''), '', 'the answer takes the badge away');
  const notifications = () => page.evaluate(async () => Object.keys(await chrome.notifications.getAll()).length);
  assert.equal(await until(notifications, (v) => v === 0), 0, 'and the notification');
  assert.equal(await until(() => page.evaluate(() => chrome.action.getTitle({})), (v) => v === 'Open Tabwright'), 'Open Tabwright');
  await reopened.locator('#log .final').last().waitFor({ timeout: 30_000 });
  assert.match(await shop.locator('#status').innerText(), ORDERED);
  await reopened.close();
  await page.close();
});

test('a question asked with the panel closed shows "?" on the toolbar button until it is answered', async () => {
  for (const open of h.context.pages().filter((p) => p.url().endsWith('/panel/panel.html'))) await open.close();
  let release;
  const held = new Promise((r) => { release = r; });
  world.setPolicy(async (state) => {
    if (stepsDone(state) > 0) return answer('Report', [{ done: { text: 'Noted.', success: true } }]);
    await held;
    return answer('Ask', [{ ask_human: { question: 'Which colour of mug?' } }]);
  });
  const { panel } = await shopAndPanel();
  await runTask(panel, 'Order a mug');
  await panel.locator('#log .step').last().waitFor();
  await panel.close();
  const page = await h.context.newPage();
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  release();
  assert.equal(await until(() => badgeOf(page), (v) => v === '?', 30_000), '?');
  // The badge and the notification are made one after the other: the notification may come a
  // moment after the badge.
  const notified = () => page.evaluate(async () => 'tabwright-waiting' in await chrome.notifications.getAll());
  assert.equal(await until(notified, (v) => v === true), true, 'a notification says so too');
  const reopened = await h.openPanel();
  await reopened.fill('#log .question textarea', 'Blue');
  await reopened.press('#log .question textarea', 'Enter');
  assert.equal(await until(() => badgeOf(page), (v) => v === ''), '', 'the answer takes the badge away');
  await reopened.locator('#log .final').last().waitFor({ timeout: 30_000 });
  await reopened.close();
  await page.close();
});

test('"Always allow" a new site keeps it in the settings: the options page shows it at once, and the next task goes there unasked', async () => {
  const other = `${h.fixtures.otherUrl}/consent/shop.html`;
  world.setPolicy((state) => (state.includes(`URL: ${other}`)
    ? answer('Report', [{ done: { text: 'At the other shop.', success: true } }])
    : answer('Go to the other shop', [{ navigate: { url: other } }])));
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await options.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  const { panel } = await shopAndPanel();
  await runTask(panel, 'Compare the price with the other shop');
  const box = panel.locator('#log .consent').last();
  await box.locator('.consent-choice').first().waitFor({ timeout: 30_000 });
  assert.equal(await box.locator('.consent-title').innerText(), 'Go to another site?');
  assert.deepEqual(await box.locator('.consent-choice').allInnerTexts(),
    ['Allow once', 'Allow for this task', 'Always allow localhost', 'Deny'], 'a button per choice, worded for a site');
  await h.screenshot(panel, 'consent-new-site');
  await box.getByRole('button', { name: 'Always allow localhost' }).click();
  await box.locator('.consent-decision').waitFor();
  assert.equal(await box.locator('.consent-decision').innerText(), 'Always allowed: localhost');
  await panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
  await options.locator('#always-sites li[data-site="localhost"]').waitFor({ timeout: 5_000 });
  const { settings } = await options.evaluate(() => chrome.storage.local.get('settings'));
  assert.deepEqual(settings.always_sites, ['localhost']);

  await panel.close();

  // Another task from the first shop: the other one is allowed now.
  const again = await shopAndPanel();
  const asked = llm.requests.length;
  await runTask(again.panel, 'Compare the price with the other shop again');
  await again.panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
  assert.ok(llm.requests.slice(asked).some((r) => JSON.stringify(r.body).includes(`URL: ${other}`)), 'the task got there');
  assert.equal(await again.panel.locator('#log .consent').count(), 0, 'nothing asked the second time');
  // The next tests start with no site allowed.
  await options.evaluate(async () => {
    const { settings: s } = await chrome.storage.local.get('settings');
    await chrome.storage.local.set({ settings: { ...s, always_sites: [] } });
  });
  await options.close();
  await again.panel.close();
});

test('the options page keeps the choice for other sites, and lists, adds and removes the sites always allowed', async () => {
  const page = await h.context.newPage();
  await page.setViewportSize({ width: 720, height: 2600 });
  const stored = () => page.evaluate(async () => (await chrome.storage.local.get('settings')).settings);
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await page.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  const save = async () => {
    await page.click('#save');
    await page.locator('#saved:not(:empty)').waitFor();
    const said = await page.locator('#saved').innerText();
    assert.equal(await page.locator('#saved').getAttribute('class'), '', `saved without a complaint: ${said}`);
  };
  const policy = (name) => page.getByRole('radio', { name });
  assert.equal(await policy('Ask before new sites').isChecked(), true, 'asking is the default');
  assert.equal(await page.locator('#site-policy-free-warning').isVisible(), true, 'acting without asking says what it allows');
  assert.match(await page.locator('#site-policy-free-warning').innerText(), /without asking/);
  for (const [name, value] of [['Only the sites I list', 'listed'], ['Act without asking', 'free'], ['Ask before new sites', 'ask']]) {
    await policy(name).check();
    await save();
    assert.equal((await stored()).site_policy, value, name);
  }

  // Sites answered "Always" (the core adds them) are listed; one is taken off, one added by hand.
  await page.evaluate(async () => {
    const { settings } = await chrome.storage.local.get('settings');
    await chrome.storage.local.set({ settings: { ...settings, always_sites: ['booking.com', 'shop.example'] } });
  });
  const listed = () => page.locator('#always-sites li').allInnerTexts().then((items) => items.map((s) => s.split('\n')[0].trim()));
  await page.waitForFunction(() => document.querySelectorAll('#always-sites li[data-site]').length === 2);
  assert.deepEqual(await listed(), ['booking.com', 'shop.example'], 'a site the core added shows at once');
  await page.getByRole('button', { name: 'Remove booking.com' }).click();
  assert.deepEqual(await listed(), ['shop.example']);
  await page.fill('#always-site-new', 'not a site');
  await page.press('#always-site-new', 'Enter');
  assert.match(await page.locator('#always-site-status').innerText(), /not a site's name/);
  await page.fill('#always-site-new', 'https://Mail.Example.org/inbox');
  await page.press('#always-site-new', 'Enter');
  assert.deepEqual(await listed(), ['shop.example', 'mail.example.org']);
  assert.deepEqual(await seriousViolations(page), []);
  await page.locator('#site-rules').screenshot({ path: path.join(OUTPUT_DIR, 'consent-options.png') });
  await save();
  assert.deepEqual((await stored()).always_sites, ['shop.example', 'mail.example.org']);
  await page.reload();
  await page.locator('body[data-ready="true"]').waitFor({ state: 'attached' });
  assert.deepEqual(await listed(), ['shop.example', 'mail.example.org'], 'kept across a reload');
  await page.getByRole('button', { name: 'Remove shop.example' }).click();
  await page.getByRole('button', { name: 'Remove mail.example.org' }).click();
  assert.deepEqual(await listed(), ['None yet.']);
  await save();
  assert.deepEqual((await stored()).always_sites, []);
  await page.close();
});
