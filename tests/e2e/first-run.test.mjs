// The first run, as a new user meets it: no model configured, so the side panel opens on its
// setup — provider, address, key (with where to get one), the model picked from the
// provider's own list, Test — then the chat, with suggested tasks that work on the page open.
// No trip to the options page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm } from './lib/harness.mjs';
import { answer, MOCK_MODELS } from './lib/mock-llm.mjs';
import { seriousViolations } from './lib/axe.mjs';

let world;
let h;
let llm;
const tasks = [];

before(async () => {
  world = await startWithMockLlm((state, body) => {
    if (body.response_format?.json_schema?.name === 'connection_check') return { output: { ok: true } };
    const task = /<task>\n([\s\S]*?)\n<\/task>/.exec(state)?.[1];
    tasks.push(task);
    return answer('Read the page', [{ done: { text: `Summary of the page for: ${task}`, success: true } }]);
  });
  ({ h, llm } = world);
});

after(() => world?.close());

test('with no model the panel opens on a short setup; once saved, the chat offers tasks for the page', async () => {
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const setup = panel.locator('#setup-view form');
  await setup.waitFor();
  assert.equal(await panel.locator('#chat-view').isHidden(), true, 'the setup comes first');
  await h.screenshot(panel, 'first-run-setup');
  assert.deepEqual(await seriousViolations(panel), []);

  // OpenAI's own address is assumed: no address field; the key link goes to OpenAI's keys page.
  assert.equal(await setup.getByLabel('Base URL').isVisible(), false);
  assert.equal(await setup.getByRole('link', { name: 'Where do I get a key?' }).getAttribute('href'), 'https://platform.openai.com/api-keys');

  // A server of one's own: its address is asked for, its models listed as the key is typed.
  await setup.getByLabel('Provider').selectOption('openai_compatible');
  await setup.getByLabel('Base URL').fill(llm.baseUrl);
  await setup.getByLabel('API key').fill('sk-first-run');
  const model = setup.getByLabel('Model');
  await panel.waitForFunction(() => document.querySelectorAll('#setup-models option').length > 0);
  assert.deepEqual(await setup.locator('#setup-models option').evaluateAll((os) => os.map((o) => o.value)), MOCK_MODELS);
  assert.equal(await model.inputValue(), MOCK_MODELS[0], 'the first listed model is offered');
  await setup.getByRole('button', { name: 'Test connection' }).click();
  await setup.locator('.setup-status.ok').waitFor();
  assert.match(await setup.locator('.setup-status').innerText(), /^It works/);
  await h.screenshot(panel, 'first-run-tested');
  await setup.getByRole('button', { name: 'Save and start' }).click();

  await panel.locator('#chat-view:not([hidden])').waitFor();
  const stored = await panel.evaluate(async () => (await chrome.storage.local.get('settings')).settings);
  assert.deepEqual(
    { provider: stored.llm.provider, base_url: stored.llm.base_url, model: stored.llm.model, api_key: stored.llm.api_key },
    { provider: 'openai_compatible', base_url: llm.baseUrl, model: 'mock-model', api_key: 'sk-first-run' },
  );
  const suggestions = panel.locator('#suggestions .suggestion');
  assert.equal(await suggestions.count(), 3);
  await h.screenshot(panel, 'first-run-suggestions');
  assert.deepEqual(await seriousViolations(panel), []);
  await suggestions.first().click();
  const final = panel.locator('#log .final');
  await final.waitFor({ timeout: 30_000 });
  assert.match(await final.innerText(), /Summary of the page for: Summarize this page in five bullet points/);
  assert.equal(llm.requests.at(-1).headers.authorization, 'Bearer sk-first-run', 'the key from the setup');

  // Once a model is set, the panel opens on the chat.
  await panel.reload();
  await panel.locator('#chat-view:not([hidden])').waitFor();
  assert.equal(await panel.locator('#setup-view').isHidden(), true);
});
