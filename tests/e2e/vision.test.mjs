// The model options saved in the options page reach the model: with vision on, every request
// carries an image of the page as Chrome shows it (captured without the debugger when the tab
// is on show), and with thinking off the answer schema has no `thinking` field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, runTaskToEnd, OUTPUT_DIR } from './lib/harness.mjs';
import { startMockLlm, answer } from './lib/mock-llm.mjs';
import { findIndex } from './lib/state.mjs';

let h;
let llm;
let policy = null;

before(async () => {
  h = await startHarness();
  llm = await startMockLlm((state, body) => policy(state, body));
});

after(async () => {
  await h?.close();
  await llm?.close();
});

/** Width and height of a base64 PNG, from its IHDR chunk. */
function pngSize(base64) {
  const png = Buffer.from(base64, 'base64');
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

test('vision on shows the page every step without the debugger; thinking off leaves thinking out', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', vision: 'on', thinking: false });
  const options = await h.context.newPage();
  await options.goto(`chrome-extension://${h.extensionId}/options/options.html`);
  assert.equal(await options.inputValue('#vision'), 'on', 'the options page shows what was saved');
  assert.equal(await options.isChecked('#thinking'), false);
  await options.close();

  const panel = await h.openPanel();
  // The task's page alone in a window of its own, on show there, as a person's tab would be.
  const url = `${h.fixtures.url}/login.html`;
  const tabId = await panel.evaluate(async (url) => (await chrome.windows.create({ url, focused: true })).tabs[0].id, url);
  await panel.waitForFunction(async (id) => (await chrome.tabs.get(id)).status === 'complete', tabId);

  // Whether the extension holds the tab's debugger: attaching again from an extension page
  // fails while it does.
  const debuggerFree = () => panel.evaluate(async (tabId) => {
    try {
      await chrome.debugger.attach({ tabId }, '1.3');
      await chrome.debugger.detach({ tabId });
      return true;
    } catch {
      return false;
    }
  }, tabId);
  const free = [];
  policy = async (state) => {
    free.push(await debuggerFree());
    const user = findIndex(state, /placeholder=Username/);
    if (free.length === 1) return answer('Type the name', [{ input: { index: user, text: 'alice', clear: true } }]);
    return answer('Finish', [{ done: { text: 'Typed the name.', success: true } }]);
  };
  const final = await runTaskToEnd(panel, 'Type alice as the user name');
  assert.match(final, /Typed the name\./);

  const bodies = llm.requests.map((r) => r.body);
  assert.equal(bodies.length, 2);
  for (const body of bodies) {
    const parts = body.messages[1].content;
    assert.ok(Array.isArray(parts), 'every request carries an image');
    const image = parts.find((p) => p.type === 'image_url').image_url.url;
    const { width, height } = pngSize(image.replace('data:image/png;base64,', ''));
    assert.ok(width >= 400 && height >= 300, `a real screenshot: ${width}×${height}`);
    assert.equal(body.response_format.json_schema.schema.properties.thinking, undefined, 'no thinking field');
    assert.ok(body.response_format.json_schema.schema.properties.next_goal);
  }
  // What the model saw, kept with the tests' output for a person to look at.
  mkdirSync(OUTPUT_DIR, { recursive: true });
  for (const [i, body] of bodies.entries()) {
    const url = body.messages[1].content.find((p) => p.type === 'image_url').image_url.url;
    writeFileSync(path.join(OUTPUT_DIR, `vision-step-${i + 1}.png`), Buffer.from(url.split(',')[1], 'base64'));
  }
  assert.deepEqual(free, [true, true], 'screenshots of a tab on show need no debugger');
  const typed = await panel.evaluate(async (tabId) => {
    const [{ result }] = await chrome.scripting.executeScript({ target: { tabId }, func: () => document.querySelector('[name=username]').value });
    return result;
  }, tabId);
  assert.equal(typed, 'alice');
});
