// Log in: the whole chain in a real browser — side panel → service worker → Rust/wasm core →
// mock LLM (OpenAI wire format) → content script → the page — for the task
// "Log in as alice with password hunter2".
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, runTask } from './lib/harness.mjs';
import { startMockLlm } from './lib/mock-llm.mjs';
import { availableActions, offeredActions } from './lib/state.mjs';
import { loginPolicy } from './lib/policies.mjs';

let h;
let llm;


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
  await panel.emulateMedia({ colorScheme: 'dark' });
  await h.screenshot(panel, 'login-panel-dark');
  await panel.emulateMedia({ colorScheme: 'light' });

  // The page really logged in (a real form submit to the fixture server).
  await site.getByRole('heading', { name: 'Welcome, alice' }).waitFor({ timeout: 5_000 });
  assert.ok(h.fixtures.log.includes('POST /login'), 'the form was submitted to the server');

  // The panel shows the task, each step with its goal and actions, and the final answer.
  assert.equal(await panel.locator('.bubble').innerText(), 'Log in as alice with password hunter2');
  const steps = panel.locator('.step');
  assert.equal(await steps.count(), 3);
  // What came of each action is folded under it: opened, as a person would.
  await panel.locator('.step .action summary').evaluateAll((lines) => lines.forEach((line) => line.click()));
  const [fill, submit, finish] = await Promise.all([0, 1, 2].map((i) => steps.nth(i).innerText()));
  assert.match(fill, /Fill in the log-in form/);
  assert.match(fill, /type "alice" into \[\d+\] Username/);
  assert.match(fill, /type ••• into \[\d+\] Password/);
  assert.match(submit, /click \[\d+\] Submit/);
  assert.match(submit, /Clicked \[\d+\] <button>; the page navigated to http:\/\/127\.0\.0\.1:\d+\/welcome\?user=alice/);
  assert.match(finish, /finish: task done/);
  assert.match(await panel.locator('.final').innerText(), /Done\s+Logged in as alice\./);
  // The steps after the first repeat the start of the request (system prompt, schema), which
  // the mock reports as read from the prompt cache, as OpenAI does.
  assert.match(await panel.locator('.final-usage').innerText(), /^3 steps · [\d,]+ tokens \([\d,]+ from the provider's cache\)$/,
    'no price is known for the mock model');
  for (const text of [fill, submit, finish]) assert.doesNotMatch(text, /hunter2/, 'the panel masks the password');

  // What the LLM received: the real page, in the OpenAI wire format, with the strict schema
  // holding exactly the registered actions.
  assert.equal(llm.requests.length, 3);
  const [firstRequest] = llm.requests;
  assert.equal(firstRequest.headers.authorization, 'Bearer sk-mock-key');
  assert.equal(firstRequest.body.model, 'mock-model');
  assert.equal(firstRequest.body.response_format.type, 'json_schema');
  assert.equal(firstRequest.body.response_format.json_schema.strict, true);
  const firstState = firstRequest.body.messages[1].content;
  assert.match(firstState, /Log in as alice with password hunter2/);
  assert.doesNotMatch(firstState, /Hidden button/, 'a display:none button is not shown to the LLM');
  // The page allows what fits it: element actions on the form, no dropdown or tab actions.
  // The schema offers the site's actions (never scripts, which the user did not allow here),
  // the same on every step.
  for (const { body } of llm.requests) {
    const available = availableActions(body);
    for (const name of ['navigate', 'click', 'input', 'send_keys', 'done']) assert.ok(available.includes(name), `${name} in ${available}`);
    for (const name of ['select_dropdown', 'switch_tab', 'close_tab', 'evaluate']) assert.ok(!available.includes(name), `${name} in ${available}`);
    assert.ok(!offeredActions(body).includes('evaluate'));
    assert.deepEqual(body.response_format, llm.requests[0].body.response_format, 'one schema for the whole task');
  }
  // The second request sees the filled form: the user name's value, never the password's, and
  // the history of step 1 with the password masked.
  const secondState = llm.requests[1].body.messages[1].content;
  assert.match(secondState, /value=alice/);
  assert.match(secondState, /Fill in the log-in form/, 'history carries the previous step');
  assert.doesNotMatch(secondState.replace('Log in as alice with password hunter2', ''), /hunter2/);
  assert.match(llm.requests[2].body.messages[1].content, /Title: Welcome, alice/);

  // The loop stopped on done: no request followed it, and the panel is ready for a new task.
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(llm.requests.length, 3);
  assert.equal(await panel.locator('#stop').isHidden(), true);
  assert.equal(await panel.locator('#run').innerText(), 'Run', 'the panel is ready for another task');
  assert.equal(await panel.locator('#stop').isVisible(), false);
});
