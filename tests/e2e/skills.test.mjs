// Skills used as a person would: a task that worked is opened from the history and saved as a
// skill, the text it typed made a parameter; the options page lists it; on the same site the
// model is offered it as a branch of the action union, calls it with a new value, and its steps
// run without the model (the page numbered differently by then), after which the model finishes.
// Deleted in the options, it is offered no more. The mock model finds the skill by its name in
// the schema the extension sent, and its parameter by the schema's own list.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startWithMockLlm, runTaskToEnd } from './lib/harness.mjs';
import { answer, schemaOf } from './lib/mock-llm.mjs';
import { findIndex, field, findField } from './lib/state.mjs';

const SKILL = 'Weather for a city';
let world;
let h;
let llm;

/** The task the state text names. */
const taskOf = (state) => /<task>\n([\s\S]*?)\n<\/task>/.exec(state)?.[1] ?? '';

/** The branch of the union whose description names the skill: `[action, its parameters]`. */
function skillOffered(body) {
  for (const branch of schemaOf(body)?.properties?.action?.items?.anyOf ?? []) {
    const [name, params] = Object.entries(branch.properties ?? {})[0] ?? [];
    if (params?.description?.includes(`("${SKILL}")`)) return [name, params.required ?? []];
  }
  return null;
}

function model(state, body) {
  const task = taskOf(state);
  const title = field(state, 'Title');
  if (/^What is the weather in Lisbon/.test(task)) {
    if (title.startsWith('Weather for Lisbon')) return answer('Report', [{ done: { text: 'Sunny in Lisbon.', success: true } }]);
    return answer('Ask for Lisbon', [
      { input: { index: findField(state, 'City'), text: 'Lisbon', clear: true } },
      { click: { index: findIndex(state, />Show weather$/) } },
    ]);
  }
  const told = state.split('\n').find((line) => line.includes(`The skill "${SKILL}"`));
  if (told) return answer('Report', [{ done: { text: `${title}. ${told}`, success: true } }]);
  const offered = skillOffered(body);
  if (offered) {
    const [action, [param]] = offered;
    return answer('Use the saved skill', [{ [action]: { [param]: 'Porto' } }]);
  }
  return answer('No skill here', [{ done: { text: 'No skill was offered.', success: false } }]);
}

before(async () => {
  world = await startWithMockLlm(model);
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

/** Opens the history's conversation titled `title` in the panel. */
async function openPast(panel, title) {
  await panel.click('#show-history');
  await panel.locator('.session', { hasText: title }).locator('.session-open').click();
  await panel.locator('#past-log .final').first().waitFor();
}

test('a conversation saved as a skill is offered on its site, called with a new value, and runs without the model', async () => {
  await h.openFixture('actions/weather.html');
  const panel = await h.openPanel();
  assert.match(await runTaskToEnd(panel, 'What is the weather in Lisbon?'), /Sunny in Lisbon/);
  await panel.click('#new-conversation');

  // Save it: the typed city is offered as a parameter, named by the field it went into.
  await openPast(panel, 'What is the weather in Lisbon?');
  await panel.click('#past-skill');
  const form = panel.locator('.skill-form');
  await form.waitFor();
  assert.match(await form.innerText(), /The agent is offered it on 127\.0\.0\.1\./);
  assert.match(await form.locator('.skill-param').innerText(), /Step 1 typed “Lisbon”/);
  assert.equal(await form.locator('.skill-param-name').inputValue(), 'city');
  assert.equal(await form.locator('.skill-name').inputValue(), 'What is the weather in Lisbon?');
  await form.locator('.skill-name').fill(SKILL);
  await h.screenshot(panel, 'panel-skill-form');
  await form.locator('button[type=submit]').click();
  const status = panel.locator('.skill-status');
  await status.filter({ hasText: 'Saved the skill' }).waitFor();
  assert.match(await status.innerText(), /Saved the skill “Weather for a city” for 127\.0\.0\.1\. On that site the agent can now use it \(as skill_weather_for_a_city\)\./);

  // The same name again on the same site is refused, saying what to do.
  await panel.click('#past-skill');
  await form.waitFor();
  await form.locator('.skill-name').fill(SKILL);
  await form.locator('button[type=submit]').click();
  await status.filter({ hasText: 'already exists' }).waitFor();
  assert.match(await status.innerText(), /A skill named "Weather for a city" already exists for 127\.0\.0\.1\. Choose another name, or delete the old one/);

  // The options page lists it.
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  const listed = options.locator('#skills .skill');
  await listed.first().waitFor();
  assert.equal(await listed.count(), 1);
  assert.match(await listed.innerText(), /Weather for a city[\s\S]*127\.0\.0\.1 · 1 step\(s\)[\s\S]*Parameters: city/);
  await listed.scrollIntoViewIfNeeded();
  await h.screenshot(options, 'options-skills');

  // Used: a task on another page of the site. The model calls the skill with another city; the
  // skill opens its page (which by now has a cookie banner, so every number moved), types the
  // new city into the field found by its features, and sends the form, without the model.
  const start = await h.openFixture('actions/history-a.html');
  await panel.click('#past-back');
  await panel.click('#history-back');
  const asked = llm.requests.length;
  const final = await runTaskToEnd(panel, 'Check the weather in Porto');
  assert.match(final, /^Done\s+Weather for Porto\..*The skill "Weather for a city" finished: Replayed all 2 step\(s\) of the skill "Weather for a city": 1 element\(s\) were where they had been, 1 were found again by their features\./);
  assert.equal(llm.requests.length - asked, 2, 'the model chose the skill and finished; the skill\'s steps asked nothing');
  const first = llm.requests[asked];
  const branch = skillOffered(first.body ?? first);
  assert.deepEqual(branch, ['skill_weather_for_a_city', ['city']]);
  await start.locator('#out', { hasText: 'Weather for Porto: sunny' }).waitFor();
  const steps = await panel.locator('#log .step').allInnerTexts();
  assert.equal(steps.length, 4, steps.join('\n---\n'));
  assert.match(steps[0], /skill weather_for_a_city \(city: "Porto"\)/);
  assert.match(steps[1], /Open the page the skill "Weather for a city" begins on/);
  assert.match(steps[2], /Ask for Porto/, 'the saved goal names the new value');
  assert.match(steps[2], /Running the skill "Weather for a city", step 2 of 2: \[\d+\] is \[\d+\]; \[\d+\] found again as \[\d+\] by its features/);
  await h.screenshot(panel, 'panel-skill-used');

  // Deleted in the options (Delete asks once more): no longer offered.
  await options.locator('#skills .skill button').click();
  await options.locator('#skills .skill button', { hasText: 'Delete? Click again' }).click();
  await options.locator('#skills .empty').waitFor();
  await panel.click('#new-conversation');
  assert.match(await runTaskToEnd(panel, 'Check the weather in Porto'), /No skill was offered/);
  await options.close();
  await panel.close();
});
