// Nobody but Tabwright's own pages and worker can drive it. A hostile extension loaded in the
// same browser (fixtures/hostile-extension/) tries every way in, from its worker, its page and
// its content scripts in every frame, and gives web pages chrome.runtime (its
// externally_connectable names the fixture sites) so that they can try too; pages post forged
// requests and frame messages into themselves and their iframes. With no task, with a task
// waiting for the person's answer and with an act waiting for their yes, none of it starts,
// steers, answers or reads anything, while Tabwright's panel, in the same run, still can.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startWithMockLlm, runTask, newConversation, manualConsents, until } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { pageOf } from './lib/observe.mjs';
import { findIndex } from './lib/state.mjs';
import { extensionIdOf, EXTENSION_DIR } from '../../scripts/lib/browser.mjs';

const HOSTILE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'hostile-extension');

let world;
let h;
let llm;
let panel;
let hostileId;
let hostilePage;
let policy = null;

before(async () => {
  world = await startWithMockLlm(
    (...request) => (policy ? policy(...request) : answer('Finish', [{ done: { text: 'Finished.', success: true } }])),
    { browserOptions: { extraExtensions: [HOSTILE_DIR] } },
  );
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
  panel = await h.openPanel();
  hostileId = await extensionIdOf(h.context, 'hostile-worker.js');
  assert.notEqual(hostileId, h.extensionId);
  hostilePage = await h.context.newPage();
  await hostilePage.goto(`chrome-extension://${hostileId}/hostile.html`);
});

after(async () => {
  await world?.close();
});

/** `check()`'s first truthy value, within `timeout` ms; throws naming `what` otherwise. */
async function waitFor(what, check, timeout = 15_000) {
  const value = await until(check, Boolean, timeout);
  if (!value) throw new Error(`timed out waiting for ${what}`);
  return value;
}

/** Everything the hostile extension has recorded so far. */
const storedTries = () => hostilePage.evaluate(async () => (await chrome.storage.local.get('tries')).tries ?? []);

/** The tries recorded from a place whose description matches `from`, once there are at least
 * `count` of them. */
async function triesFrom(from, count) {
  return waitFor(`${count} tries from ${from}`, async () => {
    const tries = (await storedTries()).filter((t) => from.test(t.from));
    return tries.length >= count ? tries : null;
  });
}

// What each place tries: the 13 panel requests, the 2 content-script messages, the bare
// request and 3 ports (hostile-tries.js).
const TRIES = 19;

/** Each try was refused by Chrome before it reached Tabwright: no message was answered, not
 * even with nothing, no port stayed open or carried anything, no script ran in its pages; and
 * no content script in a web page answered the hostile extension as it would the worker. */
function assertAllRefused(tries, where) {
  assert.ok(tries.length > 0, `${where}: nothing was tried`);
  for (const t of tries) {
    const said = `${where}: ${t.from}, ${t.kind} ${t.what}: ${JSON.stringify(t).slice(0, 500)}`;
    if (t.kind === 'message' || t.kind === 'script') assert.equal(t.outcome, 'failed', said);
    else if (t.kind === 'port') {
      assert.equal(t.outcome, 'disconnected', said);
      assert.deepEqual(t.heard, [], said);
    } else if (t.kind === 'tab') {
      assert.notEqual(t.outcome, 'answered', said);
      assert.deepEqual(t.heard ?? [], [], said);
    } else assert.equal(t.kind, 'postMessage', said);
  }
}

/** What Tabwright's own panel gets for `request`. */
const fromPanel = (request) => panel.evaluate((r) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, ...r } }), request);

/** Puts the hostile tries into the web page `page` (its main world; hostile-tries.js is one of
 * the hostile extension's web-accessible files) and runs them there, then posts its forgeries
 * into the page and each of its frames. `consent`: the id its answers to a consent name. */
async function triesFromWebPage(page, consent = 1) {
  await page.addScriptTag({ url: `chrome-extension://${hostileId}/hostile-tries.js` });
  return page.evaluate(async ({ id, consent }) => {
    const reachable = typeof globalThis.chrome?.runtime?.sendMessage === 'function';
    const tries = reachable ? await hostileTries(id, 'web page', consent) : [];
    const windows = [window, ...Array.from({ length: frames.length }, (_, i) => frames[i])];
    let posted = 0;
    for (let round = 0; round < 20; round++) posted += hostileForgeries(windows);
    return { reachable, tries, posted };
  }, { id: h.extensionId, consent });
}

/** The hostile extension tries again: its worker, its own page, and (told by its worker) its
 * content scripts in every frame of every tab, answering consent `consent`; resolves once the
 * content scripts of `page`'s top frame (and child frame, when `child`) have recorded this
 * round. */
async function hostileRound(page, label, { consent = 1, child = true } = {}) {
  const before = (await storedTries()).length;
  const fromWorker = await hostilePage.evaluate((run) => chrome.runtime.sendMessage(run), { run: h.extensionId, from: `worker, ${label}`, consent });
  const fromPage = await hostilePage.evaluate(({ id, from, consent }) => hostileTries(id, from, consent), { id: h.extensionId, from: `hostile page, ${label}`, consent });
  const site = new URL(page.url()).origin;
  const content = await waitFor(`the content scripts' tries (${label})`, async () => {
    const tries = (await storedTries()).slice(before).filter((t) => /on command$/.test(t.from));
    const inTop = tries.filter((t) => t.from.includes(`top frame ${site}`));
    const inChild = tries.filter((t) => t.from.includes('child frame http://localhost'));
    return inTop.length >= TRIES + 1 && (!child || inChild.length >= TRIES + 1) ? tries : null;
  });
  return { fromWorker, fromPage, content };
}

test('the manifest lets no other extension and no web page connect, and offers no file to the web', async () => {
  const manifest = JSON.parse(readFileSync(path.join(EXTENSION_DIR, 'manifest.json'), 'utf8'));
  assert.deepEqual(manifest.externally_connectable, { ids: [], matches: [] });
  assert.equal(manifest.web_accessible_resources, undefined);
  assert.deepEqual(await panel.evaluate(() => chrome.runtime.getManifest().externally_connectable), { ids: [], matches: [] },
    'the loaded extension says the same');

  // A page cannot show one of Tabwright's pages in a frame.
  const page = await h.openFixture('start.html');
  await page.evaluate((url) => {
    const frame = document.createElement('iframe');
    frame.src = url;
    document.body.append(frame);
    return new Promise((resolve) => { frame.onload = resolve; frame.onerror = resolve; setTimeout(resolve, 3_000); });
  }, `chrome-extension://${h.extensionId}/panel/panel.html`);
  const framed = page.frames().find((f) => f !== page.mainFrame());
  assert.ok(framed, 'the frame is there');
  assert.equal(await framed.locator('#task').count().catch(() => 0), 0, 'the panel did not load inside the page');
  await page.close();
});

test('with no task, nothing another extension or a page sends starts a task or reads anything', async () => {
  const asked = llm.requests.length;
  // The tries the hostile worker made as soon as it started: it found Tabwright and tried.
  const onLoad = await triesFrom(/^worker, on load$/, TRIES);
  assertAllRefused(onLoad, 'on load');

  // A page with a cross-origin frame: the hostile content scripts try from both as they load.
  const page = await h.openFixture('iframe-cross-origin.html');
  await page.waitForLoadState('load');
  const site = new URL(page.url()).origin;
  assertAllRefused(await triesFrom(new RegExp(`top frame ${site}.*on load$`), TRIES + 1), 'top frame, on load');
  assertAllRefused(await triesFrom(/child frame http:\/\/localhost.*on load$/, TRIES + 1), 'child frame, on load');

  const web = await triesFromWebPage(page);
  assert.equal(web.reachable, true, 'the page has chrome.runtime to try with');
  assert.equal(web.tries.length, TRIES);
  assertAllRefused(web.tries, 'web page');
  assert.ok(web.posted > 1_000);

  const round = await hostileRound(page, 'with no task');
  assert.equal(round.fromWorker.tries.filter((t) => t.kind === 'message' || t.kind === 'port').length, TRIES);
  assert.ok(round.fromWorker.tries.some((t) => t.kind === 'tab' && t.what === `port to ${page.url()}`), 'it asked the page too');
  assertAllRefused(round.fromWorker.tries, 'worker');
  assertAllRefused(round.fromPage, 'hostile page');
  assertAllRefused(round.content, 'content scripts');

  // Nothing started, nothing was stored, and the panel, asking the same thing, is answered.
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(llm.requests.length, asked, 'no request reached the model');
  const status = await fromPanel({ type: 'get_status' });
  assert.equal(status?.type, 'status', JSON.stringify(status));
  assert.equal(status.running, false);
  assert.equal(status.task_id, null, 'no task was ever started');
  assert.equal(await panel.locator('#stop').isVisible(), false);
  const { settings } = await panel.evaluate(() => chrome.storage.local.get('settings'));
  assert.ok(!JSON.stringify(settings?.secrets ?? []).includes('hostile'), 'no secret was saved');
  assert.equal(await page.frames()[1].textContent('#out'), 'Frame button not clicked');
  await page.close();
});

test('with a task waiting for the person, nothing from outside answers, pauses, stops or reads it; the panel still does', async () => {
  const states = [];
  policy = (state) => {
    states.push(state);
    if (!/The user answered/.test(state)) return answer('Ask for the card code', [{ ask_human: { question: 'What is the code of the card?' } }]);
    return answer('Finish', [{ done: { text: 'Paid with the code.', success: true } }]);
  };
  try {
    const page = await h.openFixture('iframe-cross-origin.html');
    await page.waitForLoadState('load');
    await panel.bringToFront();
    await page.bringToFront();
    await runTask(panel, 'Pay with the card on file');
    const box = panel.locator('.question textarea');
    await box.waitFor({ timeout: 30_000 });
    const asked = llm.requests.length;
    const waiting = await fromPanel({ type: 'get_status' });
    assert.equal(waiting.type, 'status');
    assert.equal(waiting.running, true);
    assert.equal(waiting.events.at(-1).type, 'question_asked', 'the task waits for the answer');

    // Everything the hostile extension has, and the page itself.
    const round = await hostileRound(page, 'while the task waits');
    assertAllRefused(round.fromWorker.tries, 'worker');
    assert.ok(round.fromWorker.tabwrightPages >= 1, 'the worker found the panel to reach into');
    assert.ok(round.fromWorker.tries.some((t) => t.kind === 'tab' && t.what === `message to ${page.url()}`), 'and asked the task\'s page');
    assertAllRefused(round.fromPage, 'hostile page');
    assertAllRefused(round.content, 'content scripts');
    const web = await triesFromWebPage(page);
    assert.equal(web.reachable, true);
    assertAllRefused(web.tries, 'web page');

    // Tabwright's content scripts answer only its worker: not even its own panel page gets a
    // reply from them, by message or over a port of their name.
    const tabId = await panel.evaluate(async (url) => (await chrome.tabs.query({ url }))[0].id, page.url());
    const direct = await panel.evaluate(async (tabId) => {
      let message;
      try {
        message = (await chrome.tabs.sendMessage(tabId, { v: 1, type: 'snapshot' })) ?? 'no answer';
      } catch (error) {
        message = `failed: ${error.message}`;
      }
      const port = await new Promise((resolve) => {
        const heard = [];
        const p = chrome.tabs.connect(tabId, { name: 'tabwright-content', frameId: 0 });
        p.onMessage.addListener((m) => heard.push(m));
        p.onDisconnect.addListener(() => resolve({ outcome: 'disconnected', heard }));
        p.postMessage({ id: 1, message: { v: 1, type: 'snapshot' } });
        setTimeout(() => resolve({ outcome: 'stayed open', heard }), 1_000);
      });
      return { message, port };
    }, tabId);
    assert.ok(direct.message === 'no answer' || /^failed:/.test(direct.message), `a content script answered the panel page: ${JSON.stringify(direct.message).slice(0, 200)}`);
    assert.deepEqual(direct.port.heard, [], 'nothing came back over the port');

    // The task still waits as it did: no answer, no pause, no stop, nothing asked of the model;
    // the frame's button was not clicked.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(llm.requests.length, asked, 'nothing reached the model');
    const still = await fromPanel({ type: 'get_status' });
    assert.equal(still.running, true);
    assert.equal(still.task_id, waiting.task_id);
    assert.equal(still.events.length, waiting.events.length, `no event since: ${JSON.stringify(still.events.slice(waiting.events.length))}`);
    assert.equal(still.state?.paused, false);
    assert.equal(await box.isVisible(), true);
    assert.equal(await page.frames()[1].textContent('#out'), 'Frame button not clicked');

    // The person answers in the panel, and the task goes on; its next look still finds the
    // frame where it is, although its page asked the frame for its token many times over.
    await box.fill('4242');
    await box.press('Enter');
    await panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
    assert.match(await panel.locator('#log .final').last().innerText(), /Paid with the code\./);
    assert.equal(states.length, 2);
    assert.match(states[1], /The user answered: 4242/);
    assert.doesNotMatch(states[1], /hostile answer/);
    for (const state of states) {
      const lines = pageOf(state).split('\n');
      const frame = lines.findIndex((l) => l.includes(`<iframe src='${h.fixtures.otherUrl}/frame-content.html'>`));
      const button = lines.findIndex((l) => l.includes('Button inside the frame'));
      assert.ok(frame >= 0 && button > frame, `look ${states.indexOf(state) + 1}:\n${pageOf(state)}`);
      assert.match(lines[button], /^\t\[\d+\]<button/, `the frame's button is inside the frame:\n${pageOf(state)}`);
    }
    await page.close();
  } finally {
    policy = null;
  }
});

test('with an act waiting for the person\'s yes, no answer from outside lets it through; the panel\'s does', async () => {
  let clicked = false;
  policy = (state) => {
    if (/Order placed: #\d+/.test(state)) return answer('Report', [{ done: { text: 'Ordered.', success: true } }]);
    if (!clicked) {
      clicked = true;
      return answer('Place the order', [{ click: { index: findIndex(state, 'Place order') } }]);
    }
    return answer('Report', [{ done: { text: 'The order was not placed.', success: false } }]);
  };
  try {
    const shop = await h.openFixture('consent/shop.html');
    await shop.waitForLoadState('load');
    // The panel answers nothing by itself in this test (harness.mjs allows every act otherwise).
    await manualConsents(panel);
    await newConversation(panel);
    await panel.bringToFront();
    await shop.bringToFront();
    await runTask(panel, 'Order the blue mug');
    await panel.locator('#log .consent .consent-choice').first().waitFor({ timeout: 30_000 });
    const asked = llm.requests.length;
    const waiting = await fromPanel({ type: 'get_status' });
    const consent = waiting.state?.pending_consent;
    assert.ok(Number.isInteger(consent?.id), `a consent waits: ${JSON.stringify(waiting.state)}`);

    // The hostile extension is handed the real id (as if it had guessed it) and answers yes in
    // every way it has; so does the page.
    const round = await hostileRound(shop, 'while an act waits', { consent: consent.id, child: false });
    for (const tries of [round.fromWorker.tries, round.fromPage, round.content]) {
      assert.ok(tries.some((t) => t.what === 'answer_consent'), 'it tried to answer');
      assertAllRefused(tries, 'answering the consent');
    }
    const web = await triesFromWebPage(shop, consent.id);
    assert.equal(web.reachable, true);
    assertAllRefused(web.tries, 'web page');

    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(await shop.locator('#status').innerText(), 'No order yet', 'the click did not reach the page');
    assert.equal(llm.requests.length, asked, 'nothing reached the model');
    const still = await fromPanel({ type: 'get_status' });
    assert.equal(still.state?.pending_consent?.id, consent.id, 'the same consent still waits');
    assert.equal(still.events.length, waiting.events.length, `no event since: ${JSON.stringify(still.events.slice(waiting.events.length))}`);

    // The panel's Allow lets it through.
    await panel.locator('#log .consent').last().getByRole('button', { name: 'Allow', exact: true }).click();
    await panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
    assert.match(await shop.locator('#status').innerText(), /^Order placed: #\d+$/);
    assert.match(await panel.locator('#log .final').last().innerText(), /Ordered\./);
    await shop.close();
  } finally {
    policy = null;
  }
});
