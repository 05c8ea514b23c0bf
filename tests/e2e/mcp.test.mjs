// Tabwright as an MCP server: the official MCP TypeScript SDK's client spawns the real
// `tabwright-mcp` binary, which reaches the extension in Chromium through the bridge Chromium
// starts from the native-messaging host manifest that scripts/install-mcp wrote into the test
// profile. The person's side is the real side panel. The only fake is the model of
// `run_task`'s tasks, which reads the state the extension sends (fields found by their label).
//
// Checked here: the tools listed, against the MCP schema published by the protocol's authors
// (tests/e2e/fixtures/mcp/SOURCE.md); a new client waits until the person allows it in the
// panel, and a denied one gets nothing; run_task with its progress; observe + act signing in
// with no model of Tabwright's at all; bad input (an unknown tool, wrong parameters, a stale
// index, no browser to reach, two clients at once, a client gone in the middle of a task).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startWithMockLlm, until } from './lib/harness.mjs';
import { loginPolicy } from './lib/policies.mjs';
import { newGate } from './lib/mock-llm.mjs';
import { findField } from './lib/state.mjs';
import { seriousViolations } from './lib/axe.mjs';
import { ROOT } from '../../scripts/lib/browser.mjs';

const home = mkdtempSync(path.join(os.tmpdir(), 'tabwright-mcp-home-'));
// Each run its own bridge socket, for Chromium's bridge and the servers alike.
const socket = path.join(home, 'bridge.sock');
process.env.TABWRIGHT_BRIDGE_SOCKET = socket;
process.env.TABWRIGHT_HOME = home;
const BINARY = path.join(home, 'bin', 'tabwright-mcp');

let world;
let h;
let panel;
/** The model of run_task's tasks; a gate, when set, holds its answers. */
let gate = null;
const clients = [];

before(async () => {
  world = await startWithMockLlm(async (state) => {
    await gate?.promise;
    return loginPolicy(state);
  }, {
    // What a person runs once: the host manifest into this profile, the binary beside it.
    beforeLaunch: (profile) => {
      execFileSync(path.join(ROOT, 'scripts', 'install-mcp'), ['--profile', profile], { stdio: 'pipe', env: process.env });
    },
  });
  ({ h } = world);
  panel = await h.openPanel();
});

after(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await world?.close();
});

/** A client of the given name connected to a new `tabwright-mcp` process. */
async function connect(name, { env = {} } = {}) {
  const transport = new StdioClientTransport({
    command: BINARY,
    args: [],
    env: { ...process.env, ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** The text of a tool result. */
const textOf = (result) => (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/** The panel's card for client `name`, and its button `label`. */
const cardButton = (name, label) =>
  panel.getByRole('alertdialog', { name: `${name} wants to use Tabwright in this browser` }).getByRole('button', { name: label, exact: true });

/** Connects `name` and lets the person allow it in the panel while its first call waits. */
async function allowedClient(name) {
  const client = await connect(name);
  const first = client.callTool({ name: 'tabs', arguments: {} });
  await panel.bringToFront();
  await cardButton(name, 'Allow').click({ timeout: 20_000 });
  const tabs = await first;
  assert.ok(!tabs.isError, textOf(tabs));
  return client;
}

/** The index of the element whose line holds `words`, in a state text. */
function indexOf(state, words) {
  const line = state.split('\n').find((l) => /^\s*\*?\[\d+\]</.test(l) && l.includes(words));
  assert.ok(line, `"${words}" in:\n${state}`);
  return Number(/\[(\d+)\]/.exec(line)[1]);
}

const mcpSchema = JSON.parse(readFileSync(path.join(ROOT, 'tests/e2e/fixtures/mcp/schema-2025-06-18.json'), 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(mcpSchema, 'mcp');
const valid = (definition, value) => {
  const check = ajv.getSchema(`mcp#/definitions/${definition}`);
  return check(value) ? '' : ajv.errorsText(check.errors);
};

test('install-mcp wrote the host manifest for this profile, naming the binary and the extension', () => {
  const manifest = JSON.parse(readFileSync(path.join(h.profile, 'NativeMessagingHosts', 'com.tabwright.bridge.json'), 'utf8'));
  assert.equal(manifest.name, 'com.tabwright.bridge');
  assert.equal(manifest.type, 'stdio');
  assert.equal(manifest.path, BINARY);
  assert.ok(existsSync(manifest.path));
  assert.ok(manifest.allowed_origins.includes(`chrome-extension://${h.extensionId}/`), manifest.allowed_origins.join());
});

test('a new client waits for the person: the panel asks, Allow lets its call go on; the tools fit the MCP schema', async () => {
  const client = await connect('e2e-client');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(),
    ['act', 'extract', 'observe', 'run_task', 'screenshot', 'stop_task', 'tabs', 'task_status']);
  assert.equal(valid('ListToolsResult', { tools }), '', 'tools/list as the published schema says');
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.doesNotThrow(() => new Ajv({ strict: false, validateFormats: false }).compile(tool.inputSchema), `${tool.name}'s input schema compiles`);
    assert.ok(tool.description.length > 40, `${tool.name} says what it does`);
  }
  const act = tools.find((t) => t.name === 'act');
  assert.ok(JSON.stringify(act.inputSchema).includes('"click"'), 'act takes the actions of the union');

  const waiting = client.callTool({ name: 'tabs', arguments: {} });
  await panel.bringToFront();
  const allow = cardButton('e2e-client', 'Allow');
  await allow.waitFor({ timeout: 20_000 });
  await h.screenshot(panel, 'mcp-client-asks');
  for (const scheme of ['light', 'dark']) {
    await panel.emulateMedia({ colorScheme: scheme });
    assert.deepEqual(await seriousViolations(panel), [], `axe on the panel asking, ${scheme}`);
  }
  await panel.emulateMedia({ colorScheme: 'light' });
  await allow.click();
  const tabs = await waiting;
  assert.equal(valid('CallToolResult', tabs), '', 'a tool result as the schema says');
  assert.ok(!tabs.isError, textOf(tabs));
  // The tabs of this browser: the panel's own page is one of them, under its id.
  const listed = tabs.structuredContent.tabs;
  const own = listed.find((t) => t.url.endsWith('/panel/panel.html'));
  assert.ok(own && Number.isInteger(own.tab_id), JSON.stringify(listed));
  assert.match(textOf(tabs), new RegExp(`tab ${own.tab_id}\\b`));
  await until(() => allow.count(), (n) => n === 0, 5_000);
  clients.splice(clients.indexOf(client), 1);
  await client.close();
});

test('a denied client gets nothing', async () => {
  const client = await connect('denied-client');
  const waiting = client.callTool({ name: 'observe', arguments: {} });
  await panel.bringToFront();
  await cardButton('denied-client', 'Deny').click({ timeout: 20_000 });
  const refused = await waiting.catch((e) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
  assert.ok(refused.isError, textOf(refused));
  assert.match(textOf(refused), /denied/i);
  const again = await client.callTool({ name: 'tabs', arguments: {} }).catch((e) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
  assert.ok(again.isError && /denied/i.test(textOf(again)), textOf(again));
  // The options list both answers, each to change.
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  const section = options.getByRole('region', { name: /Coding agents/ });
  await section.getByText('denied-client').waitFor({ timeout: 10_000 });
  assert.ok(await section.getByText('e2e-client').isVisible(), 'the allowed one is listed too');
  assert.deepEqual(await seriousViolations(options), [], 'axe on the options with the agents listed');
  await section.scrollIntoViewIfNeeded();
  await h.screenshot(options, 'mcp-options');
  await options.close();
});

test('observe + act sign in on a login form with no model of Tabwright\'s: indices from the state text; a stale one is refused', async () => {
  const client = await allowedClient('driver');
  const site = await h.openFixture('login.html');
  const { tabs } = (await client.callTool({ name: 'tabs', arguments: {} })).structuredContent ?? {};
  const tab = (tabs ?? []).find((t) => t.url.endsWith('/login.html'));
  assert.ok(tab, JSON.stringify(tabs));
  const seen = await client.callTool({ name: 'observe', arguments: { tab_id: tab.tab_id } });
  assert.ok(!seen.isError, textOf(seen));
  const state = textOf(seen);
  assert.match(state, /Sign in/);
  const act = (action) => client.callTool({ name: 'act', arguments: { action } });
  const made = await act({ click: { index: indexOf(state, 'Submit') + 10_000 } });
  assert.ok(made.isError && /observe again/i.test(textOf(made)), textOf(made));
  for (const [field, text] of [['User name', 'alice'], ['Password', 'hunter2']]) {
    const typed = await act({ input: { index: findField(state, field), text, clear: true } });
    assert.ok(!typed.isError, textOf(typed));
  }
  const submitted = await act({ click: { index: indexOf(state, 'Submit') } });
  assert.ok(!submitted.isError, textOf(submitted));
  await until(() => site.title(), (t) => t.startsWith('Welcome, alice'), 10_000);
  assert.match(await site.title(), /^Welcome, alice/, 'the page was signed in');
  const stale = await act({ click: { index: indexOf(state, 'Submit') } });
  assert.ok(stale.isError && /observe again/i.test(textOf(stale)), `the page changed: ${textOf(stale)}`);
  const after = textOf(await client.callTool({ name: 'observe', arguments: {} }));
  assert.match(after, /Sign out/);
  const page = await client.callTool({ name: 'extract', arguments: {} });
  assert.match(textOf(page), /You are signed in/);
  const shot = await client.callTool({ name: 'screenshot', arguments: {} });
  const image = shot.content.find((c) => c.type === 'image');
  assert.equal(image?.mimeType, 'image/png');
  assert.equal(Buffer.from(image.data, 'base64').subarray(1, 4).toString(), 'PNG');
  // The person sees the client's acts as a task of their own, live, and can stop them there.
  const status = await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }));
  const own = status.tasks.find((t) => t.task.includes('driver'));
  assert.ok(own && own.status === 'running' && own.step >= 3, JSON.stringify(status.tasks));
  await panel.evaluate((id) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'stop_task', task_id: id } }), own.task_id);
  const afterStop = await act({ click: { index: 1 } });
  assert.ok(afterStop.isError, textOf(afterStop));
});

test('run_task: Tabwright\'s own agent does the task, with a progress notification a step, and returns the answer', async () => {
  await h.settings({ baseUrl: world.llm.baseUrl, model: 'mock-model' });
  const client = await allowedClient('tasker');
  const progress = [];
  const result = await client.callTool(
    { name: 'run_task', arguments: { task: 'Sign in as alice with password hunter2', url: `${h.fixtures.url}/login.html` } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 120_000 },
  );
  assert.ok(!result.isError, textOf(result));
  assert.match(textOf(result), /Logged in as alice/);
  assert.equal(result.structuredContent.success, true);
  assert.ok(result.structuredContent.task_id.startsWith('task-'));
  assert.equal(progress.length, result.structuredContent.steps, `a notification a step: ${JSON.stringify(progress)}`);
  assert.ok(progress.length >= 2);
  assert.ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress), 'progress grows');
  assert.match(progress[0].message ?? '', /Step 1/);
});

test('bad input: an unknown tool and wrong parameters are refused saying what is expected', async () => {
  const client = await allowedClient('careless');
  const unknown = await client.callTool({ name: 'format_disk', arguments: {} }).then(
    (r) => ({ error: r.isError ? textOf(r) : null }), (e) => ({ error: e.message }));
  assert.match(unknown.error ?? '', /format_disk/);
  const wrong = await client.callTool({ name: 'run_task', arguments: { task: 42 } }).then(
    (r) => ({ error: r.isError ? textOf(r) : null }), (e) => ({ error: e.message }));
  assert.match(wrong.error ?? '', /task/);
  const unknownAction = await client.callTool({ name: 'act', arguments: { action: { fly: { to: 'moon' } } } });
  assert.ok(unknownAction.isError, textOf(unknownAction));
  const noTask = await client.callTool({ name: 'task_status', arguments: { task_id: 'task-1' } });
  assert.ok(noTask.isError && /no task/i.test(textOf(noTask)), textOf(noTask));
});

test('no browser to reach (not running, or the extension not installed): a clear error, and the server goes on', async () => {
  const lonely = await connect('lonely', { env: { TABWRIGHT_BRIDGE_SOCKET: path.join(home, 'nobody.sock') } });
  const { tools } = await lonely.listTools();
  assert.equal(tools.length, 8, 'the tools are listed all the same');
  const call = await lonely.callTool({ name: 'tabs', arguments: {} }).then(
    (r) => (r.isError ? textOf(r) : ''), (e) => e.message);
  assert.match(call, /not reachable/i);
  assert.match(call, /install-mcp/);
  const again = await lonely.callTool({ name: 'observe', arguments: {} }).then((r) => textOf(r), (e) => e.message);
  assert.match(again, /not reachable/i, 'still answering');
});

test('two clients at once: each acts in its own tab; a tab the other works in is refused', async () => {
  const first = await allowedClient('left');
  const second = await allowedClient('right');
  const a = await h.openFixture('login.html');
  const b = await h.openFixture('login.html');
  const tabs = (await first.callTool({ name: 'tabs', arguments: {} })).structuredContent.tabs.filter((t) => t.url.endsWith('/login.html') && !t.task_id);
  const [tabA, tabB] = tabs.slice(-2);
  const [seenA, seenB] = await Promise.all([
    first.callTool({ name: 'observe', arguments: { tab_id: tabA.tab_id } }),
    second.callTool({ name: 'observe', arguments: { tab_id: tabB.tab_id } }),
  ]);
  assert.ok(!seenA.isError && !seenB.isError, textOf(seenA) + textOf(seenB));
  const taken = await second.callTool({ name: 'observe', arguments: { tab_id: tabA.tab_id } });
  assert.ok(taken.isError && /another task/i.test(textOf(taken)), textOf(taken));
  await Promise.all([
    first.callTool({ name: 'act', arguments: { action: { input: { index: findField(textOf(seenA), 'User name'), text: 'left' } } } }),
    second.callTool({ name: 'act', arguments: { action: { input: { index: findField(textOf(seenB), 'User name'), text: 'right' } } } }),
  ]);
  const typed = [await a.inputValue('input[name=username]'), await b.inputValue('input[name=username]')].sort();
  assert.deepEqual(typed, ['left', 'right']);
});

test('a client gone in the middle of a task: the task goes on in the panel, or stops if the person said so', async () => {
  for (const stop of [false, true]) {
    await panel.evaluate((s) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'set_client_options', enabled: true, stop_on_disconnect: s } }), stop);
    const client = await allowedClient(`leaver-${stop}`);
    gate = newGate();
    const started = client.callTool(
      { name: 'run_task', arguments: { task: 'Sign in as alice with password hunter2', url: `${h.fixtures.url}/login.html` } },
      undefined, { timeout: 120_000 }).catch(() => null);
    const listed = await until(async () => (await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }))).tasks,
      (tasks) => tasks.some((t) => t.status === 'running' && t.task.startsWith('Sign in as alice')), 20_000);
    const task = listed.find((t) => t.status === 'running' && t.task.startsWith('Sign in as alice'));
    assert.ok(task, JSON.stringify(listed));
    clients.splice(clients.indexOf(client), 1);
    await client.close();
    await started;
    gate.release();
    gate = null;
    const ended = await until(async () => (await panel.evaluate(() => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status' } }))).tasks.find((t) => t.task_id === task.task_id),
      (t) => t && ['succeeded', 'failed', 'stopped'].includes(t.status), 60_000);
    assert.equal(ended.status, stop ? 'stopped' : 'succeeded', `stop_on_disconnect ${stop}`);
  }
});
