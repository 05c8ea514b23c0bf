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
