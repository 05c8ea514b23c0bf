// Log in: the whole chain in a real browser — side panel → service worker → Rust/wasm core →
// mock LLM (OpenAI wire format) → content script → the page — for the task
// "Log in as alice with password hunter2".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runTask } from './lib/harness.mjs';
import { startMockLlm, answer } from './lib/mock-llm.mjs';
import { findIndex, field, offeredActions } from './lib/state.mjs';

let h;
let llm;
const answers = [];

/** A model that reads the page: fills the fields found by placeholder, presses the button
 * found by its text, and reports success once the page welcomes alice. */
function loginPolicy(state) {
  let reply;
  if (field(state, 'Title').startsWith('Welcome, alice')) {
    reply = answer('Report that alice is logged in', [{ done: { text: 'Logged in as alice.', success: true } }]);
  } else {
    const user = findIndex(state, 'placeholder=Username');
    const pass = findIndex(state, 'placeholder=Password');
    const submit = findIndex(state, />Submit \/>$/);
    reply = user && pass && submit
      ? answer('Fill in the log-in form and submit it', [
        { input: { index: user, text: 'alice', clear: null } },
        { input: { index: pass, text: 'hunter2', clear: true } },
        { click: { index: submit } },
      ])
      : answer('No log-in form here', [{ done: { text: 'No log-in form found.', success: false } }]);
  }
  answers.push(reply.output);
  return reply;
}

before(async () => {
  h = await startHarness();
  llm = await startMockLlm(loginPolicy);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: 'sk-mock-key' });
});

after(async () => {
  await h?.close();
  await llm?.close();
});

test('log in as alice through the side panel: the page welcomes her and the loop stops on done', async () => {
  const site = await h.openFixture('login.html');
  const panel = await h.openPanel();
  await runTask(panel, 'Log in as alice with password hunter2');

  await panel.locator('.final').waitFor({ timeout: 60_000 });
  await h.screenshot(panel, 'login-panel');

  // The page really logged in (a real form submit to the fixture server).
  await site.getByRole('heading', { name: 'Welcome, alice' }).waitFor({ timeout: 5_000 });
  assert.ok(h.fixtures.log.includes('POST /login'), 'the form was submitted to the server');

  // The panel shows the task, each step with its goal and actions, and the final answer.
  assert.equal(await panel.locator('.bubble').innerText(), 'Log in as alice with password hunter2');
  const steps = panel.locator('.step');
  assert.equal(await steps.count(), 2);
  const first = await steps.nth(0).innerText();
  assert.match(first, /Fill in the log-in form and submit it/);
  assert.match(first, /click \[\d+\] Submit/);
  assert.match(first, /type "alice" into \[\d+\] Username/);
  assert.match(first, /type ••• into \[\d+\] Password/);
  assert.doesNotMatch(first, /hunter2/, 'the panel masks what is typed into a password field');
  assert.match(first, /Clicked \[\d+\] <button>/);
  assert.match(first, /navigated to http:\/\/127\.0\.0\.1:\d+\/welcome\?user=alice/);
  assert.match(await panel.locator('.final').innerText(), /Done\s+Logged in as alice\./);

  // What the LLM received: the real page, in the OpenAI wire format, with the strict schema
  // holding exactly the registered actions.
  assert.equal(llm.requests.length, 2);
  const [firstRequest] = llm.requests;
  assert.equal(firstRequest.headers.authorization, 'Bearer sk-mock-key');
  assert.equal(firstRequest.body.model, 'mock-model');
  assert.equal(firstRequest.body.response_format.type, 'json_schema');
  assert.equal(firstRequest.body.response_format.json_schema.strict, true);
  const firstState = firstRequest.body.messages[1].content;
  assert.match(firstState, /Log in as alice with password hunter2/);
  assert.doesNotMatch(firstState, /Hidden button/, 'a display:none button is not shown to the LLM');
  for (const { body } of llm.requests) {
    assert.deepEqual(offeredActions(body), ['navigate', 'click', 'input', 'done']);
  }
  const secondState = llm.requests[1].body.messages[1].content;
  assert.match(secondState, /Title: Welcome, alice/);
  assert.match(secondState, /Fill in the log-in form and submit it/, 'history carries the previous step');
  assert.doesNotMatch(secondState, /value=hunter2/, 'the password value never leaves the page');

  // The loop stopped on done: done was the last answer and no request followed it.
  assert.ok('done' in answers.at(-1).action[0]);
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(llm.requests.length, 2);
  assert.equal(await panel.locator('#stop').isHidden(), true);
  assert.equal(await panel.locator('#run').isVisible(), true);
});
