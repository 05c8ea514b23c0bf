// The side panel's history, used as a person would: conversations run in the panel are listed
// after the browser is quit and started again on the same profile; the list is searched, a
// conversation is opened (its tasks, steps, screenshot and answers drawn as in the chat),
// exported as JSON and as an HTML report, and one is deleted. Also: a task started in a new tab,
// and the tabs a task opens, gather in a tab group of its own ("Tabwright · " and its first words).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, copyFile } from 'node:fs/promises';
import path from 'node:path';
import { startWithMockLlm, runTask, runTaskToEnd, OUTPUT_DIR } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { seriousViolations } from './lib/axe.mjs';
import { findIndex, field, stepsDone, findField } from './lib/state.mjs';

let world;
let h;
let llm;

/** The task the state text names. */
const taskOf = (state) => /<task>\n([\s\S]*?)\n<\/task>/.exec(state)?.[1] ?? '';

/** Logs in by what the page says (filling the form, a screenshot, submitting), answers a
 * follow-up with the title it sees, and for any other task reports the title. */
function model(state) {
  const task = taskOf(state);
  const title = field(state, 'Title');
  if (/^Log in/.test(task)) {
    if (title.startsWith('Welcome, alice')) return answer('Report the welcome', [{ done: { text: '**Signed in** as alice.', success: true } }]);
    const done = stepsDone(state);
    if (done === 0) {
      return answer('Fill in the log-in form', [
        { input: { index: findField(state, 'Username'), text: 'alice', clear: true } },
        { input: { index: findField(state, 'Password'), text: 'hunter2', clear: true } },
      ]);
    }
    if (done === 1) return answer('Look at the filled form', [{ screenshot: {} }]);
    return answer('Submit the form', [{ click: { index: findIndex(state, />Submit$/) } }]);
  }
  if (/^Open the fixture/.test(task) && !/Sign in/.test(title)) {
    return answer('Open the log-in page', [{ navigate: { url: `${h.fixtures.url}/login.html`, new_tab: false } }]);
  }
  return answer('Read the title', [{ done: { text: `The title is ${title}.`, success: true } }]);
}

before(async () => {
  world = await startWithMockLlm(model);
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

async function sessions(panel) {
  await panel.locator('.history-list .session, .history-list .empty').first().waitFor();
  return panel.locator('.history-list .session').evaluateAll((items) => items.map((item) => ({
    title: item.querySelector('.session-title').textContent,
    meta: item.querySelector('.session-meta').textContent,
  })));
}

/** Types into the history search and waits for the list to follow. */
async function search(panel, query, expected) {
  await panel.fill('.history-search', query);
  await panel.waitForFunction((q) => document.querySelector('.history-list').dataset.query === q, query);
  assert.equal(await panel.locator('.history-list .session').count(), expected, `conversations matching "${query}"`);
}

test('conversations outlive a browser restart: listed, searched, opened, exported as JSON and report, deleted', async () => {
  await h.openFixture('login.html');
  let panel = await h.openPanel();
  assert.match(await runTaskToEnd(panel, 'Log in as alice'), /Signed in as alice/);
  assert.match(await runTaskToEnd(panel, 'Now say which page you are on'), /The title is Welcome, alice/);
  await panel.locator('#log').evaluate((log) => { log.scrollTop = 0; });
  await h.screenshot(panel, 'panel-chat-light');
  await panel.click('#new-conversation');
  await h.openFixture('actions/history-a.html');
  await panel.bringToFront();
  assert.match(await runTaskToEnd(panel, 'What is the title of this page?'), /The title is Page A/);
  // Give the worker a moment to write the last event (it writes as it broadcasts).
  await panel.waitForTimeout(300);

  await h.restart();
  panel = await h.openPanel();
  await panel.click('#show-history');
  const listed = await sessions(panel);
  assert.equal(listed.length, 2, JSON.stringify(listed));
  assert.equal(listed[0].title, 'What is the title of this page?', 'the most recent first');
  assert.equal(listed[1].title, 'Log in as alice');
  assert.match(listed[1].meta, /5 steps/);
  assert.match(listed[1].meta, /2 tasks/, 'the follow-up belongs to the first conversation');
  await h.screenshot(panel, 'panel-history-light');
  await panel.emulateMedia({ colorScheme: 'dark' });
  await h.screenshot(panel, 'panel-history-dark');
  await panel.emulateMedia({ colorScheme: 'light' });

  // Search reads the tasks, the answers and the pages seen (a page title only the log-in saw).
  await search(panel, 'alice', 1);
  await search(panel, 'welcome ALICE', 1);
  assert.equal((await sessions(panel))[0].title, 'Log in as alice');
  await search(panel, 'history-a.html', 1);
  assert.equal((await sessions(panel))[0].title, 'What is the title of this page?');
  await search(panel, 'no such words', 0);
  assert.match(await panel.locator('.history-list').innerText(), /Nothing in the history matches “no such words”/);
  await search(panel, '', 2);

  // Opening a conversation draws it as the chat did: both requests, every step, the screenshot.
  await panel.locator('.session', { hasText: 'Log in as alice' }).locator('.session-open').click();
  const past = panel.locator('#past-log');
  await past.locator('.final').nth(1).waitFor();
  assert.deepEqual(await past.locator('.bubble').allInnerTexts(), ['Log in as alice', 'Now say which page you are on']);
  assert.equal(await past.locator('.step').count(), 5);
  assert.match(await past.locator('.step').first().innerText(), /Fill in the log-in form[\s\S]*type "alice" into \[\d+\]/);
  assert.equal(await past.locator('.step img.shot').count(), 1, 'the screenshot the task took');
  assert.equal(await past.locator('.final strong').innerText(), 'Signed in', 'the answer is markdown');
  assert.doesNotMatch(await past.innerText(), /hunter2/, 'the password stays masked');
  assert.ok(await panel.locator('#chat-view').isHidden());
  await h.screenshot(panel, 'panel-history-opened');

  // The report: one self-contained page, its own screenshot inside, nothing that runs or fetches.
  const [report] = await Promise.all([panel.waitForEvent('download'), panel.click('#past-report')]);
  assert.match(report.suggestedFilename(), /^tabwright-session-\d+\.html$/);
  const html = await readFile(await report.path(), 'utf8');
  await copyFile(await report.path(), path.join(OUTPUT_DIR, 'session-report.html'));
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'">/);
  assert.match(html, /Fill in the log-in form/);
  assert.match(html, /Now say which page you are on/);
  assert.match(html, /<img class="shot" src="data:image\/png;base64,/);
  assert.match(html, /<strong>Signed in<\/strong>/);
  assert.doesNotMatch(html, /<script|hunter2/);
  const viewer = await h.context.newPage();
  await viewer.goto(`file://${path.join(OUTPUT_DIR, 'session-report.html')}`);
  assert.equal(await viewer.locator('h2').count(), 2, 'one section per task');
  await viewer.setViewportSize({ width: 1000, height: 900 });
  await h.screenshot(viewer, 'session-report');
  await viewer.close();

  // The GIF: a frame per step (4 + 1), each its screenshot or page, the goal as a caption.
  const [gif] = await Promise.all([panel.waitForEvent('download'), panel.click('#past-gif')]);
  assert.match(gif.suggestedFilename(), /^tabwright-session-\d+\.gif$/);
  const bytes = await readFile(await gif.path());
  assert.equal(bytes.subarray(0, 6).toString('latin1'), 'GIF89a');
  assert.deepEqual([bytes.readUInt16LE(6), bytes.readUInt16LE(8)], [640, 464], 'its size');
  let frames = 0;
  for (let i = 0; i + 2 < bytes.length; i += 1) if (bytes[i] === 0x21 && bytes[i + 1] === 0xf9 && bytes[i + 2] === 0x04) frames += 1;
  assert.equal(frames, 5, 'one frame per step');
  await copyFile(await gif.path(), path.join(OUTPUT_DIR, 'session.gif'));
  const gifViewer = await h.context.newPage();
  await gifViewer.setViewportSize({ width: 640, height: 464 });
  await gifViewer.goto(`file://${path.join(OUTPUT_DIR, 'session.gif')}`);
  await h.screenshot(gifViewer, 'session-gif-first-frame');
  await gifViewer.close();

  const [json] = await Promise.all([panel.waitForEvent('download'), panel.click('#past-json')]);
  const exported = JSON.parse(await readFile(await json.path(), 'utf8'));
  assert.equal(exported.format, 'tabwright-session');
  assert.deepEqual(exported.tasks.map((t) => t.task.task), ['Log in as alice', 'Now say which page you are on']);
  assert.equal(exported.tasks[0].steps.length, 4);
  assert.doesNotMatch(JSON.stringify(exported), /hunter2/);

  // Delete asks once more in place, then the conversation is gone, also after a reload.
  await panel.click('#past-back');
  const other = panel.locator('.session', { hasText: 'What is the title of this page?' });
  await other.locator('.danger-link').click();
  assert.match(await other.locator('.danger-link').innerText(), /Delete 1 task\(s\)\? Click again/);
  assert.equal((await sessions(panel)).length, 2, 'one click deletes nothing');
  await other.locator('.danger-link').click();
  await panel.waitForFunction(() => document.querySelectorAll('.history-list .session').length === 1);
  await panel.reload();
  await panel.click('#show-history');
  assert.deepEqual((await sessions(panel)).map((s) => s.title), ['Log in as alice']);
  await panel.close();
});

/** The browser's tabs and tab groups, read from an extension page. */
function tabsAndGroups(page) {
  return page.evaluate(async () => {
    const tabs = await chrome.tabs.query({});
    const groups = await chrome.tabGroups.query({});
    return {
      tabs: tabs.map((t) => ({ id: t.id, url: t.url, groupId: t.groupId })),
      groups: groups.map((g) => ({ id: g.id, title: g.title })),
    };
  });
}

test('"New tab" starts the task in a new tab of its own tab group, named after it; the user\'s tab is left alone', async () => {
  const mine = await h.openFixture('history-a.html');
  const panel = await h.openPanel();
  await panel.check('#new-tab');
  const before = await tabsAndGroups(panel);
  await runTask(panel, 'Open the fixture log-in page and read its title');
  const final = panel.locator('.final').last();
  await final.waitFor({ timeout: 60_000 });
  assert.match(await final.innerText(), /The title is Sign in — Fixture Bank/);
  const after = await tabsAndGroups(panel);
  const group = after.groups.find((g) => g.title === 'Tabwright · Open the fixture log-in…');
  assert.ok(group, JSON.stringify(after.groups));
  const opened = after.tabs.filter((t) => !before.tabs.some((b) => b.id === t.id));
  assert.equal(opened.length, 1, JSON.stringify(opened));
  assert.match(opened[0].url, /\/login\.html$/, 'the task worked in the new tab');
  assert.equal(opened[0].groupId, group.id);
  assert.equal(after.tabs.find((t) => t.url === mine.url()).groupId, -1, 'the user\'s tab is not grouped');
  assert.equal(mine.url().endsWith('/history-a.html'), true, 'and not navigated');
  assert.equal(await panel.locator('label:has(#new-tab)').isVisible(), true);
  await panel.close();
});

test('Replay does a past conversation again without the model, finding each element on a page numbered afresh', async () => {
  world.setPolicy((state) => {
    if (field(state, 'Title').startsWith('Weather for Lisbon')) {
      return answer('Report the weather', [{ done: { text: 'Sunny in Lisbon.', success: true } }]);
    }
    return answer('Ask for Lisbon', [
      { input: { index: findField(state, 'City'), text: 'Lisbon', clear: true } },
      { click: { index: findIndex(state, />Show weather$/) } },
    ]);
  });
  await h.openFixture('actions/weather.html');
  const panel = await h.openPanel();
  // A panel opened after a task shows it, and would follow up on it: start afresh.
  await panel.locator('#log .final').waitFor();
  await panel.click('#new-conversation');
  try {
    assert.match(await runTaskToEnd(panel, 'What is the weather in Lisbon?'), /Sunny in Lisbon/);
  } finally {
    world.setPolicy(null);
  }
  await panel.click('#new-conversation');
  await panel.click('#show-history');
  await panel.locator('.session', { hasText: 'What is the weather in Lisbon?' }).locator('.session-open').click();
  await panel.locator('#past-log .final').waitFor();

  const asked = llm.requests.length;
  const pages = h.context.pages().length;
  await panel.click('#past-replay');
  await panel.locator('#chat-view:not([hidden])').waitFor();
  const final = panel.locator('#log .final');
  await final.waitFor({ timeout: 60_000 });
  assert.equal(llm.requests.length, asked, 'no model was asked');
  assert.match(await panel.locator('#log .bubble').innerText(), /^Replay: What is the weather in Lisbon\?$/);
  assert.match(await final.innerText(), /Replayed all 1 step\(s\) of the saved task: 1 element\(s\) were where they had been, 1 were found again by their features\./);
  const step = await panel.locator('#log .step').first().innerText();
  assert.match(step, /Replaying step 1 of 1: \[\d+\] is \[\d+\]; \[\d+\] found again as \[\d+\] by its features/);
  assert.match(step, /Ask for Lisbon/);
  // The new tab (in the Tabwright group) shows what the form does: the replay really sent it.
  assert.equal(h.context.pages().length, pages + 1);
  const replayed = h.context.pages().at(-1);
  await replayed.locator('#out', { hasText: 'Weather for Lisbon: sunny' }).waitFor();
  assert.equal(await replayed.locator('#banner button').count(), 2, 'the page was numbered differently this time');
  await h.screenshot(panel, 'panel-replay');

  // A conversation whose password was typed as itself: the replay asks for it once, keeps it
  // as a secret for its site, and types it from there.
  await panel.click('#show-history');
  await panel.locator('.session', { hasText: 'Log in as alice' }).locator('.session-open').click();
  await panel.locator('#past-log .final').first().waitFor();
  await panel.click('#past-replay');
  const form = panel.locator('#replay-secrets form');
  await form.waitFor();
  assert.match(await form.innerText(), /typed a password, which Tabwright never keeps/);
  assert.equal(await form.locator('legend').innerText(), '127.0.0.1', 'the site it was typed on');
  assert.equal(await form.locator('input[type=text]').inputValue(), '127_0_0_1_password');
  await h.screenshot(panel, 'panel-replay-password');
  assert.deepEqual(await seriousViolations(panel), [], 'axe finds nothing serious in the form');
  const secretName = form.locator('input[type=text]');
  await secretName.fill('login password');
  await form.locator('input[type=password]').fill('hunter2');
  await form.getByRole('button', { name: 'Save and replay' }).click();
  await form.locator('.skill-status.error').waitFor();
  assert.equal(await secretName.getAttribute('aria-invalid'), 'true', 'a name the model could not write is marked');
  await secretName.fill('alice_login');
  await form.getByRole('button', { name: 'Save and replay' }).click();
  await panel.locator('#chat-view:not([hidden])').waitFor();
  const replayedLogin = panel.locator('#log .final').last();
  await panel.waitForFunction(() => document.querySelectorAll('#log .final').length === 2);
  assert.match(await replayedLogin.innerText(), /Replayed all \d+ step\(s\)/);
  assert.ok(h.context.pages().some((p) => /\/welcome\?user=alice/.test(p.url())), 'the replay signed in with the password from the secret');
  const settings = await panel.evaluate(async () => (await chrome.storage.local.get('settings')).settings);
  assert.deepEqual(settings.secrets.map((s) => [s.name, s.domains]), [['alice_login', ['127.0.0.1']]]);
  assert.doesNotMatch(await panel.locator('#log').innerText(), /hunter2/, 'the value is never shown');
  await panel.close();
});
