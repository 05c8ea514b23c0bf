// The side panel stays in step with the worker: a panel opened mid-task shows the steps so far
// and then the rest live, and a panel whose worker Chrome stopped reconnects on its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, runTask, runTaskToEnd } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex, findField } from './lib/state.mjs';

let world;
let h;
let llm;

before(async () => {
  world = await startWithMockLlm(async (state) => {
    // While a gate is open, the answer waits for it.
    await world.gate()?.promise;
    const asked = llm.requests.length;
    if (asked < 3) {
      return answer(`Type attempt ${asked}`, [{ input: { index: findField(state, 'Username'), text: `try${asked}`, clear: true } }]);
    }
    return answer('Finish', [{ done: { text: `Finished after ${asked} answers.`, success: true } }]);
  });
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

test('a panel opened in the middle of a task shows the steps so far, then the rest live', async () => {
  llm.requests.length = 0;
  const g = world.openGate();
  await h.openFixture('login.html');
  const first = await h.openPanel();
  await runTask(first, 'Type into the user name field three times');
  await first.locator('.step').first().waitFor();
  // Once the first request is waiting on the gate, let it through and hold the second answer.
  while (llm.requests.length < 1) await new Promise((r) => setTimeout(r, 20));
  const next = world.openGate();
  g.release();
  await first.locator('.step .goal', { hasText: 'Type attempt 1' }).waitFor({ timeout: 15_000 });
  await first.locator('.step').nth(1).waitFor();

  const second = await h.openPanel();
  await second.locator('.step .goal', { hasText: 'Type attempt 1' }).waitFor({ timeout: 10_000 });
  assert.equal(await second.locator('.bubble').innerText(), 'Type into the user name field three times');
  assert.equal(await second.locator('#stop').isVisible(), true, 'the reopened panel knows the task runs');

  world.closeGate();
  next.release();
  await second.locator('.final').waitFor({ timeout: 15_000 });
  assert.match(await second.locator('.final').innerText(), /Finished after 3 answers\./);
  assert.equal(await second.locator('.step').count(), 3, 'each step shown once');
  // Each panel draws on its own timer (at most ten draws a second), so the first may draw the
  // end a moment after the second; a step it never got would still be missing then.
  await first.locator('.final').waitFor({ timeout: 5_000 });
  assert.equal(await first.locator('.step').count(), 3, 'the first panel also shows each step once');
  await h.screenshot(second, 'panel-reopened-mid-task');
});

test('after Chrome stops the service worker, the open panel reconnects and shows the next task live', async () => {
  world.gate()?.release();
  world.closeGate();
  llm.requests.length = 0;
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  await h.stopWorker(panel);

  const final = await runTaskToEnd(panel, 'Type into the user name field three times', 30_000);
  assert.match(final, /Finished after 3 answers\./);
  // The cards after this task's bubble (the panel also replays the previous task on opening).
  const stepsOfThisTask = await panel.evaluate(() => {
    const bubbles = document.querySelectorAll('.bubble');
    let n = 0;
    for (let node = bubbles[bubbles.length - 1].nextElementSibling; node; node = node.nextElementSibling) {
      if (node.classList.contains('step')) n += 1;
    }
    return n;
  });
  assert.equal(stepsOfThisTask, 3, 'each step of the task shown once, live');
  assert.equal(await panel.locator('#notice').isHidden(), true, 'no error shown for a routine reconnect');
});

test('a fast task is drawn in batches, at most ten a second, with every step once and in order', async () => {
  world.gate()?.release();
  world.closeGate();
  llm.requests.length = 0;
  const TYPED = 12;
  world.setPolicy(async (state) => {
    const asked = llm.requests.length;
    if (asked <= TYPED) {
      return answer(`Type attempt ${asked}`, [{ input: { index: findField(state, 'Username'), text: `try${asked}`, clear: true } }]);
    }
    return answer('Finish', [{ done: { text: `Finished after ${asked} answers.`, success: true } }]);
  });
  try {
    await h.openFixture('login.html');
    const panel = await h.openPanel();
    await panel.locator('#new-conversation').click({ timeout: 2_000 }).catch(() => {});
    // Each draw changes the chat in one go, and a MutationObserver hears each change once.
    await panel.evaluate(() => {
      globalThis.changesSeen = 0;
      globalThis.watchedFrom = performance.now();
      new MutationObserver(() => { globalThis.changesSeen += 1; })
        .observe(document.getElementById('log'), { childList: true, subtree: true, characterData: true });
    });
    const final = await runTaskToEnd(panel, 'Type into the user name field again and again', 60_000);
    assert.match(final, new RegExp(`Finished after ${TYPED + 1} answers\\.`));
    const { changes, ms } = await panel.evaluate(() => ({ changes: globalThis.changesSeen, ms: performance.now() - globalThis.watchedFrom }));
    // The task brings 2 + 3 × 13 events; drawn one by one, each would be a change of its own.
    const events = 2 + 3 * (TYPED + 1);
    assert.ok(changes <= Math.ceil(ms / 100) + 2, `${changes} changes of the chat in ${ms.toFixed(0)} ms: more than ten draws a second`);
    assert.ok(changes < events / 2, `${changes} changes of the chat for ${events} events: they were not drawn together`);
    const goals = await panel.locator('.step .goal').allInnerTexts();
    assert.deepEqual(goals, [...Array.from({ length: TYPED }, (_, i) => `Type attempt ${i + 1}`), 'Finish']);
    const numbers = await panel.locator('.step .step-number').allInnerTexts();
    assert.deepEqual(numbers.map((n) => Number(/\d+/.exec(n)[0])), Array.from({ length: TYPED + 1 }, (_, i) => i + 1));
    assert.equal(await panel.locator('#run').innerText(), 'Run', 'the panel is ready for another task');
    assert.equal(await panel.locator('#stop').isVisible(), false);
  } finally {
    world.setPolicy(null);
  }
});
