// The core's loading (extension/boot.js, background.js): a cold start answers the panel's
// status requests, well-formed or not, with no task saved and with a finished one; an install
// whose core is missing or broken says so, naming the file, and what to do.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHarness, startWithMockLlm, runTaskToEnd } from './lib/harness.mjs';
import { STARTUP_TASK, answerStartupTask } from './lib/startup-task.mjs';
import { STATUS_REQUESTS } from './lib/status-requests.mjs';
import { EXTENSION_DIR } from '../../scripts/lib/browser.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const getStatus = { to: 'core', request: { v: 1, type: 'get_status' } };

/** The running worker's startup marks (extension/background.js), once its first module is in. */
async function workerStartup(h) {
  for (let waited = 0; waited < 10_000; waited += 50) {
    for (const worker of h.context.serviceWorkers().reverse()) {
      const marks = await worker.evaluate(() => globalThis.tabwrightStartup && { ...globalThis.tabwrightStartup }).catch(() => null);
      if (marks?.ready != null) return marks;
    }
    await sleep(50);
  }
  throw new Error('no running worker with its core loaded');
}

let world;
let h;
let llm;

before(async () => {
  world = await startWithMockLlm(answerStartupTask);
  ({ h, llm } = world);
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model' });
});

after(() => world?.close());

test('a cold start with no task saved answers status requests, the panel\'s and malformed ones', async () => {
  const page = await h.context.newPage();
  await page.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  await h.stopWorker(page);
  const panel = await h.openPanel();
  const replies = await panel.evaluate(async (requests) => {
    const out = [];
    for (const request of requests) out.push(await chrome.runtime.sendMessage({ to: 'core', request }));
    return out;
  }, STATUS_REQUESTS);
  // Answered by the core: the well-formed ones with its (empty) status, the others refused
  // with what was wrong.
  assert.deepEqual(replies.map((r) => r.type), ['status', 'status', 'status', 'refused', 'refused', 'refused', 'refused']);
  assert.equal(replies[2].task_id, null, 'this worker has no task');
  assert.match(replies[3].message, /since|invalid type/);
  const marks = await workerStartup(h);
  assert.ok(marks.ready > marks.evaluated, 'the core loaded after the worker\'s scripts ran');
  await panel.close();
  await page.close();
});

test('a cold start with the finished task saved restores it as it ended', async () => {
  await h.openFixture('login.html');
  const panel = await h.openPanel();
  assert.match(await runTaskToEnd(panel, STARTUP_TASK), /Typed the name\./);

  await h.stopWorker(panel);
  await panel.reload();
  await panel.locator('.final').waitFor({ timeout: 15_000 });
  const status = await panel.evaluate((message) => chrome.runtime.sendMessage(message), getStatus);
  assert.equal(status.type, 'status');
  assert.equal(status.events.at(-1).type, 'task_finished', 'the restored task, as it ended');
  assert.equal(status.state.running, false, 'and the core says so');
  await panel.close();
});

const built = () => readFileSync(path.join(EXTENSION_DIR, 'pkg', 'tabwright_bg.wasm'));
for (const [what, brokenBytes] of [
  ['not a wasm module', () => 'this is not WebAssembly'],
  ['cut short', () => built().subarray(0, 4096)],
]) {
  test(`an install whose core is ${what} refuses every request, naming the file and what to do`, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tabwright-no-core-'));
    const extensionDir = path.join(dir, 'extension');
    cpSync(EXTENSION_DIR, extensionDir, { recursive: true, filter: (src) => path.basename(src) !== 'tabwright_bg.wasm' });
    writeFileSync(path.join(extensionDir, 'pkg', 'tabwright_bg.wasm'), brokenBytes());
    const broken = await startHarness({ browserOptions: { extensionDir } });
    try {
      const page = await broken.context.newPage();
      await page.goto(`chrome-extension://${broken.extensionId}/panel/panel.html`);
      for (const request of [{ v: 1, type: 'get_status' }, { v: 1, type: 'start_task', task: 'Anything', tab_id: null, start_url: 'https://example.com/' }]) {
        const reply = await page.evaluate((message) => chrome.runtime.sendMessage(message), { to: 'core', request });
        assert.equal(reply.type, 'refused', request.type);
        assert.match(reply.message, /pkg\/tabwright_bg\.wasm/);
        assert.match(reply.message, /Rebuild it with scripts\/build/);
      }
    } finally {
      await broken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
