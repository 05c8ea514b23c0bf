// A page that blocks its main thread cannot hang the agent: the click times out, the LLM is told
// what happened, and the task goes on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runTaskToEnd } from './lib/harness.mjs';
import { startMockLlm, answer } from './lib/mock-llm.mjs';
import { findIndex } from './lib/state.mjs';

let h;
let llm;

before(async () => {
  h = await startHarness();
  llm = await startMockLlm((state) => {
    if (/took longer than 15 s/.test(state)) {
      return answer('Report the hang', [{ done: { text: 'The page hung when crunching numbers.', success: false } }]);
    }
    const crunch = findIndex(state, '>Crunch numbers');
    return crunch
      ? answer('Crunch the numbers', [{ click: { index: crunch } }])
      : answer('Wait for the page', [{ done: { text: 'No button found.', success: false } }]);
  });
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(async () => {
  await h?.close();
  await llm?.close();
});

test('a click on a page that blocks its main thread times out and the task goes on', async () => {
  await h.openFixture('busy-page.html');
  const panel = await h.openPanel();
  const final = await runTaskToEnd(panel, 'Crunch the numbers', 90_000);
  assert.match(final, /The page hung when crunching numbers\./);
  const first = panel.locator('.step').first();
  await first.locator('.action summary').first().click(); // what the model was told, opened
  const firstStep = await first.innerText();
  assert.match(firstStep, /✗ click \[\d+\] Crunch numbers/);
  assert.match(firstStep, /took longer than 15 s and was abandoned/);
});
