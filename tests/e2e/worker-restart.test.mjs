// A task survives Chrome stopping the service worker in the middle of it: the worker saves the
// task after every step, and when it starts again (the panel reconnecting, the alarm) the task
// goes on from its last completed step with its whole history. DEBUG_RESTART=1 prints the
// task's events and the requests the mock received.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, runTask } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex, stepsDone, findField } from './lib/state.mjs';

let world;
let h;
let llm;

before(async () => {
  world = await startWithMockLlm(async (state) => {
    const done = stepsDone(state);
    // While a gate is open, the third step's answer is held (the test stops the worker then).
    if (world.gate() && done === 2) await world.gate().promise;
    if (done >= 3) return answer('Finish', [{ done: { text: `Finished after ${done} steps.`, success: true } }]);
    return answer(`Type attempt ${done + 1}`, [{ input: { index: findField(state, 'Username'), text: `try${done + 1}`, clear: true } }]);
  });
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', fallbackModel: 'mock-model-mini' });
});

after(() => world?.close());

test('the worker stopped mid-task: the task goes on from its last completed step and finishes with its full history', async () => {
  const site = await h.openFixture('login.html');
  const panel = await h.openPanel();
  // The task runs with a model chosen in the panel, not the saved one.
  await panel.locator('#model-choice option[value="mock-model-mini"]').waitFor({ state: 'attached' });
  await panel.selectOption('#model-choice', 'mock-model-mini');
  // Hold the third request, then stop the worker while it waits for the LLM.
  const held = world.openGate();
  await runTask(panel, 'Type into the user name field three times');
  while (llm.requests.length < 3) await new Promise((r) => setTimeout(r, 20));
  await panel.locator('.step .goal', { hasText: 'Type attempt 2' }).waitFor({ timeout: 30_000 });
  // Stop it, and make sure it really stopped while the request was held (Chrome may take a moment).
  await h.stopWorker(panel);
  if (process.env.DEBUG_RESTART) console.log('released', llm.requests.length, Date.now() % 100000);
  world.closeGate();
  held.release();

  await panel.locator('.final').waitFor({ timeout: 60_000 });
  await h.screenshot(panel, 'worker-restart-panel');
  if (process.env.DEBUG_RESTART) {
    const st = await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
    console.log(JSON.stringify(st.events.map((e) => [e.type, e.step ?? e.record?.step])), llm.requests.map((r) => r.abandoned));
  }
  assert.match(await panel.locator('.final').innerText(), /Finished after 3 steps\./);
  assert.match(await panel.locator('.restored').innerText(), /goes on from step 3, with the 2 step\(s\) it had completed/);
  assert.equal(await site.inputValue('input[placeholder=Username]'), 'try3', 'the page got the third attempt');

  // The request the stopped worker was waiting on was abandoned, and step 3 asked again.
  assert.ok(llm.requests[2].abandoned, 'the stopped worker\'s request was cut');
  const status = await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  const records = status.events.filter((e) => e.type === 'step_finished').map((e) => e.record);
  assert.deepEqual(records.map((r) => r.step), [1, 2, 3, 4], 'every step once, in order');
  assert.deepEqual(records.slice(0, 3).map((r) => r.actions[0].params.text), ['try1', 'try2', 'try3']);
  assert.ok(status.events.some((e) => e.type === 'task_restored'));
  assert.equal(status.events.at(-1).type, 'task_finished');
  assert.equal(status.running, false);
  // The restored task goes on with the model it started with.
  assert.deepEqual([...new Set(llm.requests.map((r) => r.body.model))], ['mock-model-mini']);
  // The restored worker's prompt still carries the steps done before the stop.
  const afterRestart = llm.requests.slice(3).map((r) => r.body.messages[1].content);
  assert.match(afterRestart[0], /Step 1:\n(  .*\n)*  goal: Type attempt 1\n[\s\S]*Step 2:\n(  .*\n)*  goal: Type attempt 2\n/);

  // What a next restart would read: the task's start, and its whole log in pages of eight events,
  // the ones written before the stop and after it.
  const saved = await panel.evaluate(() => chrome.storage.session.get(null));
  assert.deepEqual(JSON.parse(saved.tasks), [status.task_id], 'the one task kept');
  const header = JSON.parse(saved[`task:${status.task_id}`]);
  assert.equal(header.task_id, status.task_id);
  const pages = [];
  const page = (n) => saved[`task_events:${status.task_id}:${n}`];
  for (let n = 0; page(n) !== undefined; n++) pages.push(JSON.parse(page(n)));
  assert.ok(pages.length >= 2, `${pages.length} page(s) for ${status.events.length} events`);
  assert.ok(pages.every((p) => p.task_id === status.task_id && p.events.length <= 8));
  assert.deepEqual(pages.flatMap((p) => p.events).map((e) => e.type), status.events.map((e) => e.type));
});
