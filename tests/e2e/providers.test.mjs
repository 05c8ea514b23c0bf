// Every provider family end to end: the options page saves the provider, the core speaks that
// provider's wire format to a mock that answers in nothing else, and alice really logs in on
// login.html. OpenAI itself is login.test.mjs; this file covers OpenAI-compatible servers, Azure
// OpenAI, Anthropic, Gemini and Ollama, plus the options page's own fields for them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, newConversation, runTaskOn } from './lib/harness.mjs';
import { startMockLlm, schemaOf, answer, MOCK_MODELS } from './lib/mock-llm.mjs';
import { offeredActions } from './lib/state.mjs';
import { loginPolicy } from './lib/policies.mjs';

const TASK = 'Log in as alice with password hunter2';
// The reasoning fields the model writes before choosing actions, in the order it must write them.
const REASONING = ['evaluation_previous_goal', 'memory', 'next_goal'];
// Every provider's own auth header: each test checks its own is sent and no other is.
const AUTH_HEADERS = ['authorization', 'api-key', 'x-api-key', 'x-goog-api-key'];

let h;
// One side panel for the file, as a person keeps it open: each test starts a new conversation,
// so no task builds on an earlier provider's.
let panel;

before(async () => {
  h = await startHarness();
  panel = await h.openPanel();
});

after(async () => {
  await h?.close();
});


/**
 * Saves `settings` for `provider` through the options page, pointed at a mock of that provider,
 * and runs the log-in task from the side panel. Resolves to {requests, final, steps, serverLog}
 * once the page has welcomed alice.
 */
async function logIn(provider, settings, policy = loginPolicy) {
  const llm = await startMockLlm(policy, { provider });
  let site;
  try {
    await h.settings({ provider, baseUrl: llm.baseUrl, ...settings });
    await newConversation(panel);
    const stepsBefore = await panel.locator('.step').count();
    const logStart = h.fixtures.log.length;
    site = await h.openFixture('login.html');
    const final = await runTaskOn(panel, site, TASK);
    await site.getByRole('heading', { name: 'Welcome, alice' }).waitFor({ timeout: 5_000 });
    const steps = (await panel.locator('.step').allInnerTexts()).slice(stepsBefore);
    return { requests: llm.requests, final, steps, serverLog: h.fixtures.log.slice(logStart) };
  } finally {
    // Closing the task's tab ends a task a failed assertion left running; the next test waits
    // for the panel to be idle again.
    await site?.close();
    await panel.locator('#stop').waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
    await llm.close();
  }
}

/** What every provider's run must show: a real log-in, the final answer, three requests each
 * carrying the state text and the provider's schema, and the password only inside the task. */
function assertLoggedIn({ requests, final, steps, serverLog }, schemaAt) {
  assert.ok(serverLog.includes('POST /login'), `the form was submitted to the server: ${serverLog.join(', ')}`);
  assert.match(final, /Done\s+Logged in as alice\./);
  assert.equal(steps.length, 3, steps.join('\n---\n'));
  assert.match(steps[0], /type "alice" into \[\d+\] Username/);
  assert.match(steps[1], /click \[\d+\] Submit/);
  assert.equal(requests.length, 3, 'one request per step');
  for (const [i, { body }] of requests.entries()) {
    const schema = schemaAt(body);
    assert.ok(schema, `request ${i + 1} carries the schema in the provider's place`);
    assert.equal(schemaOf(body), schema, 'the format is recognised from the body alone');
    const keys = Object.keys(schema.properties ?? {});
    assert.equal(keys.at(-1), 'action', `action comes last: ${keys}`);
    const positions = REASONING.map((k) => keys.indexOf(k));
    assert.ok(positions.every((p) => p >= 0), `reasoning fields in the schema: ${keys}`);
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b), `reasoning fields in order: ${keys}`);
    const offered = offeredActions(body);
    for (const name of ['click', 'input', 'done']) assert.ok(offered.includes(name), `${name} in ${offered}`);
    const text = JSON.stringify(body);
    assert.ok(text.includes(TASK), `request ${i + 1} carries the task`);
    assert.doesNotMatch(text.replaceAll(TASK, ''), /hunter2/, `request ${i + 1} leaks the password outside the task`);
  }
}

/** Exactly the auth header `name` (or none) among the providers' auth headers, on every request. */
function assertAuth(requests, name, value) {
  for (const { headers } of requests) {
    for (const other of AUTH_HEADERS.filter((h) => h !== name)) {
      assert.equal(headers[other], undefined, `no ${other} header: ${headers[other]}`);
    }
    if (name) assert.equal(headers[name], value);
    assert.equal(headers['content-type'], 'application/json');
  }
}

test('an OpenAI-compatible gateway logs alice in: chat completions under its base URL, a bearer key and the gateway\'s own headers', async () => {
  const run = await logIn('openai_compatible', {
    model: 'openai/gpt-4.1-mini',
    apiKey: 'sk-or-mock',
    extraHeaders: { 'HTTP-Referer': 'https://tabwright.test', 'X-Title': 'Tabwright' },
  });
  assertLoggedIn(run, (body) => body.response_format?.json_schema?.schema);
  assertAuth(run.requests, 'authorization', 'Bearer sk-or-mock');
  for (const { url, headers, body } of run.requests) {
    assert.equal(url, '/v1/chat/completions');
    assert.equal(headers['http-referer'], 'https://tabwright.test');
    assert.equal(headers['x-title'], 'Tabwright');
    assert.equal(body.model, 'openai/gpt-4.1-mini');
    assert.equal(body.response_format.type, 'json_schema');
    assert.equal(body.response_format.json_schema.strict, true);
    assert.equal(body.messages[0].role, 'system');
  }
});

test('a server without a schema mode logs alice in: JSON-object output with the schema in the system prompt', async () => {
  const run = await logIn('openai_compatible', { model: 'deepseek-chat', apiKey: 'sk-ds-mock', structuredOutput: 'json_object' });
  assertLoggedIn(run, (body) => schemaOf(body));
  for (const { body } of run.requests) {
    assert.deepEqual(body.response_format, { type: 'json_object' });
    assert.match(body.messages[0].content, /Answer with one JSON object and nothing else/);
  }
});

test('Azure OpenAI logs alice in: the deployment and api-version in the URL, the key in api-key, no bearer token', async () => {
  const run = await logIn('azure_openai', {
    model: 'tabwright-gpt4o',
    apiVersion: '2024-10-21',
    apiKey: 'azure-mock-key',
    extraHeaders: { 'Ocp-Apim-Subscription-Key': 'apim-mock' },
  });
  assertLoggedIn(run, (body) => body.response_format?.json_schema?.schema);
  assertAuth(run.requests, 'api-key', 'azure-mock-key');
  for (const { url, headers, body } of run.requests) {
    assert.equal(url, '/openai/deployments/tabwright-gpt4o/chat/completions?api-version=2024-10-21');
    assert.equal(headers['ocp-apim-subscription-key'], 'apim-mock');
    assert.equal(body.response_format.json_schema.strict, true);
  }
});

test('Anthropic logs alice in: Messages with x-api-key and anthropic-version, the schema as the forced tool\'s input_schema', async () => {
  const run = await logIn('anthropic', {
    model: 'claude-sonnet-4-5',
    apiKey: 'sk-ant-mock',
    extraHeaders: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' },
  });
  assertLoggedIn(run, (body) => body.tools?.[0]?.input_schema);
  assertAuth(run.requests, 'x-api-key', 'sk-ant-mock');
  for (const { url, headers, body } of run.requests) {
    assert.equal(url, '/v1/messages');
    assert.equal(headers['anthropic-version'], '2023-06-01');
    // Without it the API refuses a request that carries the extension's Origin.
    assert.equal(headers['anthropic-dangerous-direct-browser-access'], 'true');
    assert.equal(headers['anthropic-beta'], 'token-efficient-tools-2025-02-19');
    assert.equal(body.model, 'claude-sonnet-4-5');
    assert.equal(body.tools.length, 1);
    assert.deepEqual(body.tool_choice, { type: 'tool', name: body.tools[0].name });
    assert.equal(body.tools[0].input_schema.type, 'object');
    assert.ok(body.max_tokens > 0, 'Anthropic requires max_tokens');
    assert.ok(body.system?.[0]?.text?.length > 0, 'the system prompt is top-level');
    assert.deepEqual(body.system[0].cache_control, { type: 'ephemeral' }, 'the prompt cache may keep it');
    assert.deepEqual(body.tools[0].cache_control, { type: 'ephemeral' });
    assert.deepEqual(body.messages.map((m) => m.role), ['user']);
  }
});

test('Gemini logs alice in: generateContent on the model\'s path, the key in x-goog-api-key (never the URL), the schema in responseJsonSchema', async () => {
  const run = await logIn('gemini', {
    model: 'gemini-2.5-flash',
    apiKey: 'AIza-mock-key',
    extraHeaders: { 'X-Goog-User-Project': 'tabwright-e2e' },
  });
  assertLoggedIn(run, (body) => body.generationConfig?.responseJsonSchema);
  assertAuth(run.requests, 'x-goog-api-key', 'AIza-mock-key');
  for (const { url, headers, body } of run.requests) {
    assert.equal(url, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(headers['x-goog-user-project'], 'tabwright-e2e');
    assert.equal(body.generationConfig.responseMimeType, 'application/json');
    assert.equal(body.generationConfig.responseSchema, undefined, 'only one schema field');
    assert.ok(body.systemInstruction?.parts?.[0]?.text, 'the system prompt is a systemInstruction');
    assert.deepEqual(body.contents.map((c) => c.role), ['user']);
  }
});

test('Ollama logs alice in: /api/chat without any key, stream off, the schema as format', async () => {
  const run = await logIn('ollama', {
    model: 'qwen3:8b',
    extraHeaders: { 'X-Client': 'tabwright-e2e' },
    contextTokens: 16384,
  });
  assertLoggedIn(run, (body) => body.format);
  assertAuth(run.requests, null);
  for (const { url, headers, body } of run.requests) {
    assert.equal(url, '/api/chat');
    assert.equal(headers['x-client'], 'tabwright-e2e');
    assert.equal(body.model, 'qwen3:8b');
    assert.equal(body.stream, false, 'one JSON answer, not a stream of lines');
    assert.equal(body.options?.num_ctx, 16384, 'the context window set in options, not Ollama\'s small default');
    assert.deepEqual(body.messages.map((m) => m.role), ['system', 'user']);
  }
});

test('the fallback model saved in options answers when Ollama does not have the main model', async () => {
  const missing = 'llama9:70b';
  const run = await logIn('ollama', { model: missing, fallbackModel: 'qwen3:8b', llmTimeout: 30 }, (state, body) => (
    body.model === missing
      ? { status: 404, body: { error: `model "${missing}" not found, try pulling it first` } }
      : loginPolicy(state)
  ));
  assert.match(run.final, /Done\s+Logged in as alice\./);
  // The first step asks the main model, then the fallback; once the fallback has answered, the
  // next steps go to it straight away instead of failing on the main model again.
  assert.deepEqual(run.requests.map((r) => r.body.model), [missing, 'qwen3:8b', 'qwen3:8b', 'qwen3:8b']);
  // No context window set: the default, room for a step's request and its answer.
  assert.deepEqual(new Set(run.requests.map((r) => r.body.options?.num_ctx)), new Set([32768]));
});

test('the options page keeps every LLM field across a reload, shows the API version only for Azure, and saves nothing when a header line is malformed', async () => {
  const values = {
    provider: 'azure_openai',
    baseUrl: 'https://contoso.openai.azure.com',
    apiVersion: '2024-10-21',
    model: 'gpt4o-deployment',
    apiKey: 'azure-key-1',
    extractionModel: 'gpt4o-mini-deployment',
    fallbackModel: 'gpt4o-backup',
    llmTimeout: 45,
    // A value may hold a colon: only the first one separates the name.
    extraHeaders: { 'Ocp-Apim-Subscription-Key': 'apim-1', 'X-Trace': 'a: b' },
  };
  await h.settings(values);
  const page = await h.context.newPage();
  // Tall enough for the whole form, so the screenshot shows every LLM field and the error by Save.
  await page.setViewportSize({ width: 800, height: 2000 });
  const stored = () => page.evaluate(async () => (await chrome.storage.local.get('settings')).settings);
  try {
    await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
    const inputs = {
      provider: '#provider', baseUrl: '#base-url', apiVersion: '#api-version', model: '#model', apiKey: '#api-key',
      extractionModel: '#extraction-model', fallbackModel: '#fallback-model', llmTimeout: '#llm-timeout',
    };
    for (const [key, selector] of Object.entries(inputs)) {
      assert.equal(await page.inputValue(selector), String(values[key]), `${selector} after a reload`);
    }
    assert.equal(await page.inputValue('#extra-headers'), 'Ocp-Apim-Subscription-Key: apim-1\nX-Trace: a: b');
    assert.equal(await page.locator('#api-version').isVisible(), true);
    assert.equal(await page.locator('#model-label').innerText(), 'Deployment name');
    assert.equal(await page.getAttribute('#base-url', 'placeholder'), 'e.g. https://YOUR-RESOURCE.openai.azure.com');

    // Stored under the names the core reads (src/settings.rs), the headers as an object.
    const { llm } = await stored();
    assert.deepEqual(
      { ...llm },
      {
        provider: 'azure_openai',
        base_url: 'https://contoso.openai.azure.com',
        model: 'gpt4o-deployment',
        api_key: 'azure-key-1',
        extraction_model: 'gpt4o-mini-deployment',
        api_version: '2024-10-21',
        extra_headers: { 'Ocp-Apim-Subscription-Key': 'apim-1', 'X-Trace': 'a: b' },
        fallback_model: 'gpt4o-backup',
        structured_output: '',
        timeout_s: 45,
        prices: [],
        context_tokens: null,
      },
    );

    // The six providers, each with its own base URL placeholder: the provider's own address as
    // the default where it has one, else an example; the API version is Azure's alone.
    const placeholders = {
      openai: 'Default: https://api.openai.com/v1',
      openai_compatible: 'e.g. https://openrouter.ai/api/v1',
      anthropic: 'Default: https://api.anthropic.com/v1',
      gemini: 'Default: https://generativelanguage.googleapis.com/v1beta',
      ollama: 'Default: http://localhost:11434',
      azure_openai: 'e.g. https://YOUR-RESOURCE.openai.azure.com',
    };
    const labels = await page.locator('#provider option').allInnerTexts();
    assert.deepEqual(labels, ['OpenAI', 'OpenAI-compatible (OpenRouter, Groq, LM Studio…)', 'Azure OpenAI', 'Anthropic', 'Google Gemini', 'Ollama']);
    for (const [provider, placeholder] of Object.entries(placeholders)) {
      await page.selectOption('#provider', provider);
      assert.equal(await page.getAttribute('#base-url', 'placeholder'), placeholder, provider);
      assert.equal(await page.locator('#api-version').isVisible(), provider === 'azure_openai', `API version shown for ${provider}`);
    }

    // A line without a colon, then a name with a space: refused next to Save, nothing stored.
    const before = await stored();
    for (const [text, line] of [['X-Good: 1\nnot a header line', 2], ['Bad Name: x', 1], ['Cookie: a=b', 1]]) {
      await page.fill('#extra-headers', text);
      await page.fill('#model', 'another-deployment');
      await page.click('#save');
      await page.locator('#saved.error').waitFor({ timeout: 5_000 });
      assert.match(await page.locator('#saved').innerText(), new RegExp(`^Not saved: Extra headers, line ${line} `));
      assert.equal(await page.getAttribute('#extra-headers', 'aria-invalid'), 'true');
      assert.deepEqual(await stored(), before, `nothing saved for ${JSON.stringify(text)}`);
    }
    await h.screenshot(page, 'options-providers');

    // Azure without an API version, or a timeout out of range, cannot be submitted at all.
    await assert.rejects(h.settings({ ...values, apiVersion: '' }), /#api-version/);
    await assert.rejects(h.settings({ ...values, llmTimeout: 5 }), /#llm-timeout/);
    assert.deepEqual(await stored(), before);

    // Names the core also accepts (an older or hand-written store) show as the provider they mean.
    await page.evaluate(async () => {
      const { settings } = await chrome.storage.local.get('settings');
      await chrome.storage.local.set({ settings: { ...settings, llm: { ...settings.llm, provider: 'Google' } } });
    });
    await page.reload();
    assert.equal(await page.inputValue('#provider'), 'gemini');
  } finally {
    await page.close();
  }
});

test('the model field offers each provider\'s own model list, asked with the key as typed; a failed list says why', async () => {
  const page = await h.context.newPage();
  await page.setViewportSize({ width: 800, height: 1200 });
  try {
    await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
    await page.locator('#model').waitFor();
    const auth = {
      openai: (headers) => headers.authorization === 'Bearer list-key',
      anthropic: (headers) => headers['x-api-key'] === 'list-key' && headers['anthropic-version'] === '2023-06-01',
      gemini: (headers) => headers['x-goog-api-key'] === 'list-key',
      ollama: (headers) => headers.authorization === 'Bearer list-key',
    };
    for (const provider of ['openai', 'anthropic', 'gemini', 'ollama']) {
      const llm = await startMockLlm(() => { throw new Error('no chat here'); }, { provider });
      try {
        await page.selectOption('#provider', provider);
        await page.fill('#api-key', 'list-key');
        await page.fill('#base-url', llm.baseUrl);
        await page.locator('#models-hint', { hasText: '2 models offered by the provider' }).waitFor({ timeout: 10_000 });
        const offered = await page.locator('#model-list option').evaluateAll((os) => os.map((o) => o.value));
        assert.deepEqual(offered, MOCK_MODELS, `${provider}: the list as the provider gave it, without models that do not write`);
        assert.ok(llm.modelRequests.length >= 1, `${provider}: the list was asked of the provider`);
        assert.ok(auth[provider](llm.modelRequests.at(-1).headers), `${provider}: with the key: ${JSON.stringify(llm.modelRequests.at(-1).headers)}`);
        assert.equal(await page.getAttribute('#model', 'list'), 'model-list', 'the field still takes any name');
      } finally {
        await llm.close();
      }
    }
    // A server that answers no list there (an Ollama named as OpenAI): the hint says why.
    const llm = await startMockLlm(() => { throw new Error('no chat here'); }, { provider: 'ollama' });
    try {
      await page.selectOption('#provider', 'openai');
      await page.fill('#base-url', `${llm.baseUrl}/v1`);
      const hint = page.locator('#models-hint.error');
      await hint.waitFor({ timeout: 10_000 });
      assert.match(await hint.innerText(), /^The provider's model list could not be read: .*404/);
      assert.equal(await page.locator('#model-list option').count(), 0);
    } finally {
      await llm.close();
    }
  } finally {
    await page.close();
  }
});

test('the side panel runs the next task with the model chosen there (the saved one, another the options name, or one the provider lists), and each task shows its model', async () => {
  const llm = await startMockLlm(() => answer('Finish', [{ done: { text: 'Looked.', success: true } }]), { provider: 'openai' });
  const site = await h.openFixture('login.html');
  try {
    // Saved while the panel is open: it follows the options without being reopened.
    await h.settings({ provider: 'openai', baseUrl: llm.baseUrl, model: 'mock-model', fallbackModel: 'mock-fallback', apiKey: 'k' });
    const choice = panel.locator('#model-choice');
    const shown = () => choice.evaluate((s) => s.selectedOptions[0]?.textContent);
    await panel.waitForFunction(() => document.querySelector('#model-choice option')?.textContent === 'mock-model (from the options)');
    assert.equal(await choice.inputValue(), '', 'the saved model by default');
    // Opening the choice asks the provider for its list, once.
    await choice.focus();
    await panel.locator('#model-choice optgroup[label="From the provider"] option[value="mock-model-mini"]').waitFor({ state: 'attached', timeout: 10_000 });
    const groups = await choice.evaluate((s) => [...s.querySelectorAll('optgroup')].map((g) => [g.label, [...g.children].map((o) => o.value)]));
    assert.deepEqual(groups, [['Configured in the options', ['mock-fallback']], ['From the provider', ['mock-model-mini']]],
      'the saved model once, the fallback, then what the provider lists besides them');
    assert.equal(llm.modelRequests.length, 1);

    const run = async (model) => {
      await choice.selectOption(model);
      await newConversation(panel);
      const before = llm.requests.length;
      await runTaskOn(panel, site, 'Look at the page');
      return llm.requests.slice(before).map((r) => r.body.model);
    };
    assert.deepEqual(await run('mock-model-mini'), ['mock-model-mini'], 'the chosen model answers the task');
    assert.equal(await panel.locator('.task-model').last().innerText(), 'Model: mock-model-mini');
    assert.equal(await shown(), 'mock-model-mini', 'the choice holds for the next task');
    await h.screenshot(panel, 'panel-model-choice');
    assert.deepEqual(await run('mock-fallback'), ['mock-fallback']);
    assert.deepEqual(await run(''), ['mock-model'], 'back to the saved model');
    assert.equal(await panel.locator('.task-model').last().innerText(), 'Model: mock-model');
    // The settings stay as saved: the choice is the panel's, for its tasks.
    const saved = await panel.evaluate(async () => (await chrome.storage.local.get('settings')).settings.llm.model);
    assert.equal(saved, 'mock-model');
  } finally {
    await site.close();
    await llm.close();
  }
});
