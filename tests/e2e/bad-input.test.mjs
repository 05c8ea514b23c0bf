// Bad input gets a clear message in the side panel and nothing hangs: no LLM configured, an LLM
// answering an HTTP error, an LLM that cannot be reached, a page Chrome does not let extensions
// touch, and a task stopped while the LLM is still thinking.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, runTask, runTaskToEnd, newConversation } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';

let world;
let h;
let llm;

before(async () => {
  world = await startWithMockLlm(() => answer('Finish', [{ done: { text: 'ok', success: true } }]));
  ({ h, llm } = world);
});

after(() => world?.close());

async function closeAllButOne() {
  for (const page of h.context.pages().slice(1)) await page.close();
}

test('with no LLM configured the panel says what to set and where', async () => {
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  // The panel opens on its setup; put off, a task says what to set.
  await panel.locator('#setup-view:not([hidden]) form').waitFor();
  await panel.getByRole('button', { name: 'Later' }).click();
  await runTask(panel, 'Log in as alice');
  const notice = panel.locator('#notice');
  await notice.waitFor({ state: 'visible', timeout: 10_000 });
  const text = await notice.innerText();
  assert.match(text, /No model is chosen/);
  assert.match(text, /settings/);
  assert.equal(await panel.locator('#task').inputValue(), 'Log in as alice', 'the task text is kept');
  await h.screenshot(panel, 'no-llm-configured');
  const [options] = await Promise.all([
    h.context.waitForEvent('page'),
    notice.getByRole('button', { name: 'Open settings' }).click(),
  ]);
  await options.waitForLoadState();
  assert.match(options.url(), /\/options\/options\.html$/);
  await options.locator('#base-url').waitFor();
  await closeAllButOne();
});

test('an LLM HTTP error ends the task with the status, the URL and what to check', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: 'sk-wrong' });
  world.setPolicy(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided: sk-wrong.', type: 'invalid_request_error' } } }));
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await newConversation(panel);
  const text = await runTaskToEnd(panel, 'Log in as alice', 30_000);
  assert.match(text, /HTTP 401/);
  assert.ok(text.includes(`${llm.baseUrl}/chat/completions`), text);
  assert.match(text, /Incorrect API key provided/);
  assert.match(text, /Check the API key in Tabwright's settings/);
  assert.equal(await panel.locator('#run').innerText(), 'Run', 'the panel is ready for another task');
  assert.equal(await panel.locator('#stop').isVisible(), false);
  // Said once, where the task ends, with the way to fix it: not again in the step that met it.
  const log = await panel.locator('#log').innerText();
  assert.equal(log.split('Incorrect API key provided').length - 1, 1, log);
  assert.equal(await panel.locator('#log .step-error').count(), 0);
  const [options] = await Promise.all([
    h.context.waitForEvent('page'),
    panel.locator('.final').getByRole('button', { name: 'Open settings' }).click(),
  ]);
  await options.waitForLoadState();
  assert.match(options.url(), /\/options\/options\.html$/);
  await closeAllButOne();
});

test('a model that does not answer in the shape asked: the person reads that it was asked again, the model\'s words are folded beneath', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: '' });
  world.setPolicy(() => ({ output: 'I think I should click the Submit button.' }));
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await newConversation(panel);
  const text = await runTaskToEnd(panel, 'Log in as alice', 30_000);
  const asked = "The model's answer could not be used, so it was told what was wrong and asked again.";
  assert.ok(text.includes(`Stopped after 3 failed steps in a row. ${asked}`), text);
  const steps = await panel.locator('#log .step-error .problem-text').allInnerTexts();
  assert.deepEqual(steps, [asked, asked, asked], 'each step says it in the person\'s words');
  const log = panel.locator('#log');
  assert.doesNotMatch(await log.innerText(), /valid JSON|Answer with one JSON object/, 'the model\'s words are folded away');
  assert.equal(await panel.locator('.final').getByRole('button', { name: 'Open settings' }).count(), 0, 'no settings can fix a model\'s slip');
  await panel.locator('.final .problem-detail summary').click();
  assert.match(await panel.locator('.final .problem-detail').innerText(), /not valid JSON of the required shape/);
  await h.screenshot(panel, 'model-answer-unusable');
  world.setPolicy(() => answer('Finish', [{ done: { text: 'ok', success: true } }]));
  await closeAllButOne();
});

test('an unreachable LLM ends the task naming the URL', async () => {
  await h.settings({ baseUrl: 'http://127.0.0.1:9/v1', model: 'mock-model', apiKey: '' });
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const text = await runTaskToEnd(panel, 'Log in as alice', 30_000);
  assert.match(text, /Could not reach the LLM at http:\/\/127\.0\.0\.1:9\/v1\/chat\/completions/);
  await closeAllButOne();
});

test('a chrome:// page gets a clear message instead of a task', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: '' });
  const page = await h.context.newPage();
  await page.goto('chrome://version/');
  const before = llm.requests.length;
  const panel = await h.openPanel();
  await runTask(panel, 'Read the version');
  const notice = panel.locator('#notice');
  await notice.waitFor({ state: 'visible', timeout: 10_000 });
  assert.match(await notice.innerText(), /cannot work on chrome:\/\/version\/: Chrome does not let extensions act on this kind of page/);
  assert.equal(llm.requests.length, before);
  await closeAllButOne();
});

test('an output schema with a keyword the result check cannot check is refused before the task starts, naming it', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: '' });
  const site = await h.openFixture('login.html');
  const panel = await h.openPanel();
  const before = llm.requests.length;
  const start = (schema) => panel.evaluate(async ({ schema, url }) => chrome.runtime.sendMessage({
    to: 'core',
    request: { v: 1, type: 'start_task', task: 'Read the page', tab_id: null, start_url: url, output_schema: schema },
  }), { schema, url: site.url() });
  const refused = await start({
    type: 'object',
    $defs: { Mail: { type: 'string', pattern: '^.+@.+$' } },
    properties: { email: { $ref: '#/$defs/Mail' } },
  });
  assert.equal(refused.type, 'refused');
  assert.match(refused.message, /The output schema uses `pattern` at `properties\.email`, which Tabwright cannot check/);
  assert.equal(llm.requests.length, before, 'no task ran');
  await panel.close();
  await closeAllButOne();
});

test('stop ends a task while the LLM is still answering', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: '' });
  const slowAnswer = world.openGate();
  world.setPolicy(async () => {
    await slowAnswer.promise;
    return answer('Too late', [{ done: { text: 'should not be shown', success: true } }]);
  });
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const finalsBefore = await panel.locator('.final').count();
  const requestsBefore = llm.requests.length;
  await runTask(panel, 'Log in as alice');
  await panel.locator('#stop').waitFor({ state: 'visible', timeout: 10_000 });
  while (llm.requests.length === requestsBefore) await new Promise((r) => setTimeout(r, 50));
  const stoppedAt = Date.now();
  await panel.click('#stop');
  const final = panel.locator('.final').nth(finalsBefore);
  await final.waitFor({ timeout: 10_000 });
  assert.ok(Date.now() - stoppedAt < 5_000, 'stop does not wait for the LLM');
  assert.match(await final.innerText(), /Stopped/);
  const pendingRequest = llm.requests[requestsBefore];
  for (let i = 0; i < 50 && !pendingRequest.abandoned; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(pendingRequest.abandoned, true, 'the LLM request was aborted, so the provider stops generating');
  slowAnswer.release();
  assert.equal(await panel.locator('#run').innerText(), 'Run', 'the panel is ready for another task');
  assert.equal(await panel.locator('#stop').isVisible(), false);
  await closeAllButOne();
});

test('a page that failed to load still goes to the LLM, which navigates away', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: '' });
  const seen = [];
  world.setPolicy((state) => {
    seen.push(state);
    if (/Note: The page failed to load/.test(state)) {
      return answer('Leave the broken page', [{ navigate: { url: `${h.fixtures.url}/login.html` } }]);
    }
    return answer('Report', [{ done: { text: `Now on: ${/^Title: (.*)$/m.exec(state)?.[1]}`, success: true } }]);
  });
  const broken = await h.context.newPage();
  await broken.goto('http://127.0.0.1:9/').catch(() => {}); // nothing listens there: Chrome's error page
  const panel = await h.openPanel();
  const text = await runTaskToEnd(panel, 'Get to the sign-in page', 30_000);
  assert.match(text, /Now on: Sign in — Fixture Bank/);
  assert.match(seen[0], /URL: http:\/\/127\.0\.0\.1:9\//);
  await closeAllButOne();
});

test('a task text past the limit is counted, kept whole and not run; the core refuses one sent anyway', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: '' });
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const count = panel.locator('#task-count');
  const before = llm.requests.length;
  const long = 'Read this. '.repeat(2_000) + 'x'; // 22,001 characters
  await panel.fill('#task', long);
  await count.filter({ hasText: /\S/ }).waitFor();
  assert.equal(await count.innerText(), '22,001 characters: a task may have at most 20,000. Shorten it to run it.');
  assert.equal(await panel.locator('#run').isDisabled(), true);
  await panel.press('#task', 'Enter');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(llm.requests.length, before, 'nothing was sent');
  assert.equal((await panel.inputValue('#task')).length, long.length, 'nothing typed is cut');
  await h.screenshot(panel, 'task-too-long');

  await panel.fill('#task', 'a'.repeat(19_000));
  assert.equal(await count.innerText(), '19,000 / 20,000 characters');
  assert.equal(await panel.locator('#run').isDisabled(), false);
  await panel.fill('#task', 'Log in');
  assert.equal(await count.isVisible(), false, 'a short task shows no count');

  const reply = await panel.evaluate((task) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'start_task', task, tab_id: null } }), 'z'.repeat(100_000));
  assert.equal(reply.type, 'refused');
  assert.match(reply.message, /^The task is 100000 characters long; a task may have at most 20000\./);
  assert.equal(llm.requests.length, before);
  await closeAllButOne();
});
