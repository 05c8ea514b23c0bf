// Settings saved in the options page reach the core: the step limit the LLM is told, the
// last step offering only `done`, and actions the user excluded never offered.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runTaskToEnd } from './lib/harness.mjs';
import { startMockLlm, answer } from './lib/mock-llm.mjs';
import { offeredActions } from './lib/state.mjs';

let h;
let llm;

before(async () => {
  h = await startHarness();
  llm = await startMockLlm((state, body) => {
    if (offeredActions(body).length === 1) {
      return answer('Out of steps', [{ done: { text: 'Stopped at the step limit.', success: false } }]);
    }
    return answer('Look around', [{ navigate: { url: /^URL: (.*)$/m.exec(state)[1] } }]);
  });
});

after(async () => {
  await h?.close();
  await llm?.close();
});

test('the step limit and excluded actions saved in options are enforced: the last step offers only done', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', maxSteps: 2, excludeActions: ['screenshot', 'extract'] });
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  assert.equal(await options.inputValue('#max-steps'), '2', 'the options page shows what was saved');
  assert.equal(await options.inputValue('#model'), 'mock-model');
  assert.equal(await options.inputValue('#exclude-actions'), 'screenshot, extract');
  await options.close();

  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const final = await runTaskToEnd(panel, 'Wander around');
  assert.match(final, /Finished without success\s+Stopped at the step limit\./);
  assert.equal(llm.requests.length, 2);
  assert.match(llm.requests[0].body.messages[1].content, /Step 1 of 2\./);
  const offered = offeredActions(llm.requests[0].body);
  for (const name of ['navigate', 'click', 'input', 'search_page', 'done']) assert.ok(offered.includes(name), `${name} in ${offered}`);
  for (const name of ['screenshot', 'extract']) assert.ok(!offered.includes(name), `excluded ${name} in ${offered}`);
  assert.match(llm.requests[1].body.messages[1].content, /Step 2 of 2\. This is the last step/);
  assert.deepEqual(offeredActions(llm.requests[1].body), ['done']);
  assert.match(await panel.locator('.step').first().innerText(), /Step 1 of 2/);
});

test('settings written by a script through the options page land every time: 100 saves in a row', async () => {
  // The options page fills its form from storage as it opens; a script that typed before that
  // finished had its values overwritten (about one headless run in 25 started with "the LLM
  // base URL is empty"). Each save must land whole.
  const reader = await h.context.newPage();
  await reader.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  const stored = async () => (await reader.evaluate(() => chrome.storage.local.get('settings'))).settings;
  for (let i = 0; i < 100; i++) {
    await h.settings({ baseUrl: `http://127.0.0.1:9/v${i}`, model: `model-${i}`, maxSteps: String(5 + (i % 20)) });
    const settings = await stored();
    assert.deepEqual([settings.llm.base_url, settings.llm.model, settings.max_steps], [`http://127.0.0.1:9/v${i}`, `model-${i}`, 5 + (i % 20)], `save ${i + 1}`);
  }
  await reader.close();
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

test('a script writing settings waits for the options page to show what is stored, however slowly storage answers', async () => {
  // The same race, made certain: the options page's storage answers 300 ms late, so its form
  // is filled from storage well after the page has loaded.
  const slow = await startHarness();
  try {
    await slow.context.addInitScript(() => {
      if (!location.pathname.endsWith('/options/options.html') || !globalThis.chrome?.storage) return;
      const area = chrome.storage.local;
      const get = area.get.bind(area);
      area.get = (...args) => new Promise((resolve) => setTimeout(resolve, 300)).then(() => get(...args));
    });
    for (let i = 0; i < 3; i++) {
      await slow.settings({ baseUrl: `http://127.0.0.1:9/slow${i}`, model: `slow-${i}` });
      const reader = await slow.context.newPage();
      await reader.goto(`chrome-extension://${slow.extensionId}/panel/panel.html`);
      const { settings } = await reader.evaluate(() => chrome.storage.local.get('settings'));
      await reader.close();
      assert.deepEqual([settings?.llm?.base_url, settings?.llm?.model], [`http://127.0.0.1:9/slow${i}`, `slow-${i}`], `save ${i + 1}`);
    }
  } finally {
    await slow.close();
  }
});
