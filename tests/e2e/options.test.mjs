// The options page used as a person would: test the connection, keep the API key only for the
// browser session, add a secret (never shown back) the agent then types without the model ever
// seeing it, set prices, list blocked sites, and move the settings through a file that holds
// no key and no secret. Each change is checked where it takes effect: the model's requests,
// the page, the panel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startWithMockLlm, runTaskToEnd } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex, field, findField } from './lib/state.mjs';

let world;
let h;
let llm;

/** Answers the connection check as asked, and logs in with the secret by the page's text. */
function model(state, body) {
  if (body.response_format?.json_schema?.name === 'connection_check') return { output: { ok: true } };
  if (field(state, 'Title').startsWith('Welcome, alice')) {
    return answer('Report', [{ done: { text: 'Signed in with <secret>alice_password</secret>.', success: true } }]);
  }
  const pass = findField(state, 'Password');
  if (pass && !/type="password"[^\n]*value=/.test(state) && !/Typed .* into \[\d+\]/.test(state)) {
    return answer('Fill in the form', [
      { input: { index: findField(state, 'Username'), text: 'alice', clear: true } },
      { input: { index: pass, text: '<secret>alice_password</secret>', clear: true } },
    ]);
  }
  return answer('Submit', [{ click: { index: findIndex(state, />Submit$/) } }]);
}

before(async () => {
  world = await startWithMockLlm(model);
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', apiKey: 'sk-first' });
});

after(() => world?.close());

async function openOptions() {
  const page = await h.context.newPage();
  await page.setViewportSize({ width: 720, height: 2600 });
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await page.locator('#base-url').waitFor();
  // The form is filled in from storage just after the page loads.
  await page.waitForFunction(() => document.getElementById('model').value !== '');
  return page;
}

const stored = (page) => page.evaluate(async () => (await chrome.storage.local.get('settings')).settings);

async function save(page) {
  await page.click('#save');
  const status = page.locator('#saved:not(:empty)');
  await status.waitFor();
  return status.innerText();
}

test('Test connection asks the model once with the settings as typed, and says what failed', async () => {
  const page = await openOptions();
  const before = llm.requests.length;
  await page.click('#test-connection');
  await page.locator('#connection.ok').waitFor();
  assert.match(await page.locator('#connection').innerText(), /^It works: mock-model answered in \d+ ms\.$/);
  const asked = llm.requests.slice(before);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].body.response_format.json_schema.name, 'connection_check');
  assert.equal(asked[0].headers.authorization, 'Bearer sk-first');

  // Unsaved edits are what is tested: a server nobody listens on.
  await page.fill('#base-url', 'http://127.0.0.1:9/v1');
  await page.click('#test-connection');
  await page.locator('#connection.error').waitFor();
  assert.match(await page.locator('#connection').innerText(), /127\.0\.0\.1:9\/v1\/chat\/completions/);
  // A wrong key, as the provider refuses it.
  await page.fill('#base-url', llm.baseUrl);
  await page.fill('#api-key', 'sk-wrong');
  world.setPolicy((state, body, { headers }) => (headers.authorization === 'Bearer sk-wrong'
    ? { status: 401, body: { error: { message: 'Incorrect API key provided: sk-wrong.' } } } : model(state, body)));
  await page.click('#test-connection');
  await page.locator('#connection.error').waitFor();
  assert.match(await page.locator('#connection').innerText(), /HTTP 401[\s\S]*Incorrect API key provided/);
  world.setPolicy(null);
  assert.equal((await stored(page)).llm.base_url, llm.baseUrl, 'testing saved nothing');
  await page.close();
});

test('a secret typed in options is used on its site by name; its value never reaches the model or the page again', async () => {
  let page = await openOptions();
  await page.click('#add-secret');
  const row = page.locator('.secret').last();
  await row.locator('.secret-name').fill('alice_password');
  await row.locator('.secret-value').fill('hunter2');
  await row.locator('.secret-domains').fill('127.0.0.1');
  assert.equal(await save(page), 'Saved.');
  assert.deepEqual((await stored(page)).secrets, [{ name: 'alice_password', value: 'hunter2', domains: ['127.0.0.1'] }]);

  // Shown back without its value: an empty field that says a value is kept, and how long.
  await page.reload();
  await page.locator('.secret').first().waitFor();
  assert.equal(await page.inputValue('.secret-name'), 'alice_password');
  assert.equal(await page.inputValue('.secret-value'), '');
  assert.equal(await page.getAttribute('.secret-value', 'placeholder'), 'Saved (hidden, 7 characters)');
  assert.doesNotMatch(await page.content(), /hunter2/);
  // Saving again with the field left empty keeps the value.
  await page.fill('#max-steps', '12');
  assert.equal(await save(page), 'Saved.');
  assert.equal((await stored(page)).secrets[0].value, 'hunter2');
  await page.close();

  await h.openFixture('login.html');
  const panel = await h.openPanel();
  const before = llm.requests.length;
  const final = await runTaskToEnd(panel, 'Log in as alice');
  // The answer names the secret it used, by name, never by value.
  assert.match(final, /Signed in with 🔑 alice_password\./);
  assert.doesNotMatch(final, /hunter2/);
  assert.match(await panel.locator('.final .secret-ref').last().getAttribute('title'), /secret “alice_password”/);
  const sent = llm.requests.slice(before).map((r) => JSON.stringify(r.body)).join('\n');
  assert.match(sent, /alice_password/, 'the model is told the name');
  assert.doesNotMatch(sent, /hunter2/, 'never the value');
  await panel.close();

  // A secret without a value, or a value without a name, is refused with the row named.
  page = await openOptions();
  await page.click('#add-secret');
  await page.locator('.secret').last().locator('.secret-name').fill('pin');
  assert.equal(await save(page), 'Not saved: the secret “pin” has no value.');
  await page.close();
});

test('keys kept only for the browser session: stored apart, used, and after a restart the panel says to enter the key again', async () => {
  let page = await openOptions();
  await page.fill('#api-key', 'sk-session');
  await page.check('#keys-in-session');
  assert.equal(await save(page), 'Saved.');
  const settings = await stored(page);
  assert.equal(settings.keys_in_session, true);
  assert.equal(settings.llm.api_key, '', 'not on disk');
  assert.deepEqual(
    await page.evaluate(() => chrome.storage.session.get('session_keys')),
    { session_keys: { api_key: 'sk-session', by_provider: { openai: 'sk-session' } } },
    'the key in use, and each provider\'s own',
  );
  assert.equal(JSON.stringify(await page.evaluate(() => chrome.storage.local.get(null))).includes('sk-session'), false, 'no key on disk');
  await page.reload();
  await page.waitForFunction(() => document.getElementById('api-key').value === 'sk-session');
  await page.close();

  await h.openFixture('actions/history-a.html');
  let panel = await h.openPanel();
  const before = llm.requests.length;
  world.setPolicy(() => answer('Finish', [{ done: { text: 'Looked.', success: true } }]));
  await runTaskToEnd(panel, 'Look at the page');
  assert.equal(llm.requests[before].headers.authorization, 'Bearer sk-session');
  await panel.close();

  await h.restart();
  await h.openFixture('actions/history-a.html');
  panel = await h.openPanel();
  await panel.fill('#task', 'Look at the page again');
  await panel.press('#task', 'Enter');
  const notice = panel.locator('#notice:not([hidden])');
  await notice.waitFor();
  assert.match(await notice.innerText(), /Your API key was kept only until the browser closed[\s\S]*Enter it again in Tabwright's settings/);
  assert.equal(await notice.locator('button', { hasText: 'Open settings' }).count(), 1, 'a way to the settings');
  world.setPolicy(null);
  page = await openOptions();
  assert.equal(await page.inputValue('#api-key'), '', 'the key is gone with the session');
  await page.uncheck('#keys-in-session');
  await page.fill('#api-key', 'sk-first');
  assert.equal(await save(page), 'Saved.');
  assert.equal((await stored(page)).llm.api_key, 'sk-first');
  await page.close();
  await panel.close();
});

test('prices, blocked sites and a bad price line: costs appear in the panel, the firewall list is kept, nothing bad is saved', async () => {
  const page = await openOptions();
  await page.fill('#prices', 'mock-model 1000 2000\nbroken line');
  assert.match(await save(page), /^Not saved: Prices, line 2 \(“broken line”\): write a model name and two numbers/);
  assert.equal(await page.getAttribute('#prices', 'aria-invalid'), 'true');
  await page.fill('#prices', 'mock-model 1000 2000 100\nother-model 1 2');
  await page.fill('#blocked-domains', '*.blocked.example\nads.example');
  assert.equal(await save(page), 'Saved.');
  const settings = await stored(page);
  assert.deepEqual(settings.llm.prices, [
    { model_prefix: 'mock-model', input_per_million: 1000, output_per_million: 2000, cached_input_per_million: 100 },
    { model_prefix: 'other-model', input_per_million: 1, output_per_million: 2 },
  ]);
  assert.deepEqual(settings.blocked_domains, ['*.blocked.example', 'ads.example']);
  await h.screenshot(page, 'options-light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await h.screenshot(page, 'options-dark');
  await page.close();

  await h.openFixture('actions/history-a.html');
  const panel = await h.openPanel();
  world.setPolicy(() => answer('Finish', [{ done: { text: 'Looked.', success: true } }]));
  const final = await runTaskToEnd(panel, 'Look at the page');
  world.setPolicy(null);
  assert.match(final, /1 step · [\d,]+ tokens( \([\d,]+ from the provider's cache\))? · \$\d+\.\d{4}/, 'the cost by the user\'s price');
  await panel.close();
});

test('settings move through a file without the API key or secrets; importing keeps the ones here', async () => {
  const page = await openOptions();
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-settings')]);
  assert.equal(download.suggestedFilename(), 'tabwright-settings.json');
  const text = await readFile(await download.path(), 'utf8');
  assert.doesNotMatch(text, /sk-first|hunter2|api_key|secrets/);
  const file = JSON.parse(text);
  assert.equal(file.format, 'tabwright-settings');
  assert.equal(file.settings.llm.model, 'mock-model');

  // Edited elsewhere (and someone tried to slip a key in): imported, the key here stays.
  file.settings.max_steps = 7;
  file.settings.llm.api_key = 'sk-from-file';
  file.settings.secrets = [{ name: 'x', value: 'from-file', domains: [] }];
  const edited = path.join(os.tmpdir(), `tabwright-settings-${Date.now()}.json`);
  await writeFile(edited, JSON.stringify(file));
  await page.setInputFiles('#import-file', edited);
  await page.locator('#saved', { hasText: 'Imported' }).waitFor();
  assert.equal(await page.inputValue('#max-steps'), '7');
  const settings = await stored(page);
  assert.equal(settings.max_steps, 7);
  assert.equal(settings.llm.api_key, 'sk-first');
  assert.deepEqual(settings.secrets.map((s) => s.name), ['alice_password']);

  // Not a settings file: nothing changes.
  const other = path.join(os.tmpdir(), `not-settings-${Date.now()}.json`);
  await writeFile(other, '{"hello": 1}');
  await page.setInputFiles('#import-file', other);
  await page.locator('#saved.error').waitFor();
  assert.match(await page.locator('#saved').innerText(), /is not a Tabwright settings file/);
  assert.equal((await stored(page)).max_steps, 7);
  await page.close();
});

test('Azure OpenAI: the resource endpoint needs an API version, the v1 base URL needs none', async () => {
  const page = await openOptions();
  const kept = await stored(page);
  try {
    await page.selectOption('#provider', 'azure_openai');
    await page.fill('#base-url', 'https://contoso.openai.azure.com');
    await page.fill('#model', 'contoso-gpt');
    await page.fill('#api-version', '');
    assert.equal(await page.locator('#api-version').evaluate((el) => el.required), true);
    await page.click('#save');
    // The browser holds the form back, and says which field is missing.
    assert.equal(await page.locator('#api-version').evaluate((el) => el.validity.valueMissing), true);
    assert.equal((await stored(page)).llm.provider, kept.llm.provider, 'nothing was saved');

    await page.fill('#base-url', 'https://contoso.openai.azure.com/openai/v1/');
    assert.equal(await page.locator('#api-version').evaluate((el) => el.required), false);
    assert.equal(await save(page), 'Saved.', 'the core takes the v1 base URL without a version');
    const saved = (await stored(page)).llm;
    assert.equal(saved.provider, 'azure_openai');
    assert.equal(saved.api_version, '');
  } finally {
    await page.evaluate((settings) => chrome.storage.local.set({ settings }), kept);
    await page.close();
  }
});

test('an empty base URL is shown as the provider\'s own address and saved as it is; a server without one asks for it', async () => {
  const page = await openOptions();
  // The fields in four groups, what a first run needs first.
  assert.deepEqual(await page.locator('#settings > fieldset > legend').allInnerTexts(), ['Model', 'Behaviour', 'Privacy & safety', 'Advanced', 'Settings file']);
  const first = await page.locator('#settings > fieldset').first().locator('input, select').evaluateAll((all) => all.map((e) => e.id));
  assert.deepEqual(first, ['provider', 'base-url', 'api-version', 'model', 'api-key', 'keys-in-session']);
  assert.equal(await page.getAttribute('#max-steps', 'placeholder'), 'Default: 100', 'an empty number is its default');
  const kept = await stored(page);
  const baseUrl = page.locator('#base-url');
  try {
    await page.selectOption('#provider', 'openai');
    await page.fill('#base-url', '');
    await page.fill('#model', 'gpt-4.1-mini');
    assert.equal(await baseUrl.getAttribute('placeholder'), 'Default: https://api.openai.com/v1');
    assert.equal(await baseUrl.evaluate((el) => el.required), false);
    assert.equal(await page.locator('#model').getAttribute('placeholder'), 'e.g. gpt-4.1-mini', 'an example, not a value');
    assert.equal(await save(page), 'Saved.', 'left as shown, the base URL is the provider\'s own');
    assert.equal((await stored(page)).llm.base_url, '');

    await page.selectOption('#provider', 'openai_compatible');
    assert.equal(await baseUrl.getAttribute('placeholder'), 'e.g. https://openrouter.ai/api/v1');
    assert.equal(await baseUrl.evaluate((el) => el.required), true, 'another server has no address to assume');
    await page.fill('#model', 'some-model');
    await page.click('#save');
    assert.equal(await baseUrl.evaluate((el) => el.validity.valueMissing), true, 'the browser holds the form back');
    assert.equal((await stored(page)).llm.provider, 'openai', 'nothing was saved');
  } finally {
    await page.evaluate((settings) => chrome.storage.local.set({ settings }), kept);
    await page.close();
  }
});

test('each provider keeps its own base URL, model and key: switching away and back brings them back, after a reload too', async () => {
  const page = await openOptions();
  const kept = await stored(page);
  const values = () => page.evaluate(() => ['base-url', 'model', 'api-key'].map((id) => document.getElementById(id).value));
  try {
    const provider = await page.locator('#provider').inputValue();
    const own = await values();
    assert.equal(own[1], 'mock-model');
    await page.selectOption('#provider', 'anthropic');
    assert.deepEqual(await values(), ['', '', ''], 'another provider starts from its own, empty fields');
    await page.fill('#model', 'claude-test');
    await page.fill('#api-key', 'sk-ant-test');
    await page.selectOption('#provider', provider);
    assert.deepEqual(await values(), own, 'switching back brings the first provider\'s fields back');
    assert.equal(await save(page), 'Saved.');
    await page.close();

    const again = await openOptions();
    const valuesAgain = () => again.evaluate(() => ['base-url', 'model', 'api-key'].map((id) => document.getElementById(id).value));
    await again.selectOption('#provider', 'anthropic');
    assert.deepEqual(await valuesAgain(), ['', 'claude-test', 'sk-ant-test'], 'kept across a reload');
    await again.selectOption('#provider', provider);
    assert.deepEqual(await valuesAgain(), own);
    assert.equal((await stored(again)).llm.model, 'mock-model', 'the saved settings are the chosen provider\'s');
    await again.close();
  } finally {
    const page = await h.context.newPage();
    await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
    await page.evaluate((settings) => chrome.storage.local.set({ settings }), kept);
    await page.close();
  }
});

test('after a save the field at fault is marked, an edit clears what was said, and a focused field is not under the save bar', async () => {
  const page = await openOptions();
  const kept = await stored(page);
  try {
    await page.fill('#model', '');
    assert.match(await save(page), /^Saved, but a task would not start yet: No model is chosen\./);
    assert.equal(await page.getAttribute('#model', 'aria-invalid'), 'true', 'the field at fault is marked');
    await page.fill('#model', 'mock-model');
    assert.equal(await page.getAttribute('#model', 'aria-invalid'), null);
    assert.equal(await page.locator('#saved').innerText(), '', 'what was said of the last save goes with an edit');
    assert.equal(await save(page), 'Saved.');
    await page.fill('#max-steps', '7');
    assert.equal(await page.locator('#saved').innerText(), '', '"Saved." does not stay after a later edit');

    // A short window: every field reached by Tab is above the sticky save bar.
    await page.setViewportSize({ width: 720, height: 600 });
    await page.evaluate(() => window.scrollTo(0, 0));
    const hidden = [];
    await page.focus('#provider');
    for (let i = 0; i < 40; i += 1) {
      await page.keyboard.press('Tab');
      const place = await page.evaluate(() => {
        const focused = document.activeElement;
        const bar = document.querySelector('.save-row');
        if (!focused || bar.contains(focused) || !document.getElementById('settings').contains(focused)) return null;
        const at = focused.getBoundingClientRect();
        const under = bar.getBoundingClientRect();
        return { id: focused.id || focused.className, covered: at.bottom > under.top + 1 && at.top < under.bottom - 1 };
      });
      if (place?.covered) hidden.push(place.id);
    }
    assert.deepEqual(hidden, [], 'no focused field sits under the save bar');
  } finally {
    await page.evaluate((settings) => chrome.storage.local.set({ settings }), kept);
    await page.close();
  }
});
