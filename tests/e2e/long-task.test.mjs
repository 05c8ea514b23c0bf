// A long task keeps what the model learned: 150 steps on a shop of 300 items, one item added
// to the cart a step, by a mock model that writes in `memory` what it did at each step and
// keeps a plan. At the last step the model looks in the request the extension really sent for
// what it wrote at steps 1, 75 and 149 (the older ones as memory lines, the last one whole) and
// for its plan with the part it ticked off; it ends the task saying what it found and what it
// missed. The panel shows the plan under the step that ticked it off.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startWithMockLlm, runTaskToEnd } from './lib/harness.mjs';
import { addTopItem, stepOf } from './lib/state.mjs';

const STEPS = 150;
let world;
let h;

const memoryAt = (step) => `step ${step}: added one more item to the cart`;

/** Adds the item at the top of the shop each step; at the last, reads its own memory back. */
function shopper(state) {
  const step = stepOf(state);
  const history = /<history>\n([\s\S]*?)<\/history>/.exec(state)?.[1] ?? '';
  const plan = /<plan>\n([\s\S]*?)<\/plan>/.exec(state)?.[1] ?? '';
  const thoughts = { evaluation_previous_goal: `Judged at step ${step}.`, memory: memoryAt(step), next_goal: `Add an item (step ${step})` };
  if (step >= STEPS) {
    const wanted = [1, 75, 149].filter((n) => !history.includes(`memory: ${memoryAt(n)}\n`));
    const ticked = plan.includes('[x] 1. Add 149 items to the cart') && plan.includes('[ ] 2. Check the memory');
    const text = `missing memory of steps: [${wanted.join(', ')}]; plan ticked: ${ticked}`;
    return { output: { ...thoughts, action: [{ done: { text, success: wanted.length === 0 && ticked } }] } };
  }
  const planned = step === 1 ? [{ text: 'Add 149 items to the cart', done: false }, { text: 'Check the memory', done: false }]
    : step === STEPS - 1 ? [{ text: 'Add 149 items to the cart', done: true }, { text: 'Check the memory', done: false }]
      : null;
  return { output: { ...thoughts, plan: planned, action: [addTopItem(state)] } };
}

before(async () => {
  world = await startWithMockLlm(shopper);
  h = world.h;
  await h.settings({ baseUrl: world.llm.baseUrl, model: 'mock-model', maxSteps: String(STEPS) });
});

after(async () => {
  await world?.close();
});

test('at step 150 the model reads the memory it wrote at steps 1, 75 and 149, and its plan', async () => {
  const site = await h.openFixture('bench/cart-page.html');
  const panel = await h.openPanel();
  const final = await runTaskToEnd(panel, 'Add 149 items to the cart, then check you remember doing it.', 170_000);
  assert.match(final, /missing memory of steps: \[\]; plan ticked: true/);
  const requests = world.llm.requests.map((r) => r.body);
  assert.equal(requests.length, STEPS, 'one request a step');
  // The shop really changed: 149 items added, one a step.
  assert.equal(await site.locator('#count').innerText(), String(STEPS - 1));
  // The plan shows where the model ticked it off.
  const plan = panel.locator('#log .step .plan').last();
  assert.equal(await plan.getAttribute('aria-label'), 'Plan');
  assert.deepEqual(await plan.locator('li').allInnerTexts(), ['☑ Add 149 items to the cart', '☐ Check the memory']);
  await h.screenshot(panel, 'panel-long-task');

  // The worker keeps steps far behind short; the history keeps every one whole, and a short
  // record told again (as a restarted worker's catch-up tells its saved log) replaces none.
  const kept = await panel.evaluate(async () => {
    const history = await import('/history-store.js');
    const [task] = await history.listTasks();
    const first = (await history.getTask(task.task_id)).steps[0];
    const short = { ...first, trimmed: true, actions: [] };
    await history.recordEvent(task.task_id, 1, { type: 'step_finished', v: 1, record: short }, null);
    const { steps } = await history.getTask(task.task_id);
    return { count: steps.length, trimmed: steps.filter((r) => r.trimmed).length, first: steps[0] };
  });
  assert.equal(kept.count, STEPS);
  assert.equal(kept.trimmed, 0, 'no short record replaced a whole one');
  assert.equal(kept.first.output.memory, memoryAt(1));
  assert.equal(typeof kept.first.actions[0].params.index, 'number', 'the first step with its parameters, for a replay');

  // The report shows the plan under the step that ticked it off.
  await panel.click('#show-history');
  await panel.locator('.session').first().locator('.session-open').click();
  const [report] = await Promise.all([panel.waitForEvent('download'), panel.click('#past-report')]);
  const html = await readFile(await report.path(), 'utf8');
  assert.match(html, /<ul class="plan" aria-label="Plan"><li>☑ Add 149 items to the cart<\/li><li>☐ Check the memory<\/li><\/ul>/);
});
