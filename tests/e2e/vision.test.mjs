// The model options saved in the options page reach the model: with vision on, every request
// carries an image of the page as Chrome shows it (captured without the debugger when the tab
// is on show, with the numbered boxes drawn), and with thinking off the answer schema has no
// `thinking` field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { EXTENSION_DIR } from '../../scripts/lib/browser.mjs';
import { startWithMockLlm, runTaskToEnd, OUTPUT_DIR } from './lib/harness.mjs';
import { answer } from './lib/mock-llm.mjs';
import { countColour, decodePng } from './lib/png.mjs';
import { findIndex, findField } from './lib/state.mjs';

/** The colours of the numbered boxes, as highlight.js has them: box n is drawn in colour
 * n mod their number. */
const BOX_COLOURS = JSON.parse(/const PALETTE = (\[[^\]]*\])/.exec(readFileSync(path.join(EXTENSION_DIR, 'content', 'highlight.js'), 'utf8'))[1].replaceAll("'", '"'));

let h;
let llm;
let world;

before(async () => {
  world = await startWithMockLlm(() => answer('Finish', [{ done: { text: 'Finished.', success: true } }]));
  ({ h, llm } = world);
});

after(() => world?.close());

/** Width and height of a base64 PNG, from its IHDR chunk. */
function pngSize(base64) {
  const png = Buffer.from(base64, 'base64');
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

test('vision on shows the page every step, with its numbered boxes, without the debugger; thinking off leaves thinking out', async () => {
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
  const userIndexes = [];
  world.setPolicy(async (state) => {
    free.push(await debuggerFree());
    const user = findField(state, 'Username');
    userIndexes.push(user);
    if (free.length === 1) return answer('Type the name', [{ input: { index: user, text: 'alice', clear: true } }]);
    return answer('Finish', [{ done: { text: 'Typed the name.', success: true } }]);
  });
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
    // The numbered boxes are in the picture: the user name field's box, in its colour.
    const colour = BOX_COLOURS[userIndexes[bodies.indexOf(body)] % BOX_COLOURS.length];
    const boxPixels = countColour(decodePng(image), colour);
    assert.ok(boxPixels >= 100, `the user name field's box (${colour}) shows in the screenshot: ${boxPixels} pixels`);
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
  // The panel shows each step's screenshot as a thumbnail that opens large on a click.
  const shots = panel.locator('.step img.shot');
  assert.equal(await shots.count(), 2, 'a thumbnail per step');
  assert.match(await shots.first().getAttribute('src'), /^data:image\/png;base64,iVBOR/);
  const small = (await shots.first().boundingBox()).width;
  await shots.first().click();
  assert.ok((await shots.first().boundingBox()).width > small, 'a click enlarges it');
  await h.screenshot(panel, 'panel-with-screenshots');
  const typed = await panel.evaluate(async (tabId) => {
    const [{ result }] = await chrome.scripting.executeScript({ target: { tabId }, func: () => document.querySelector('[name=username]').value });
    return result;
  }, tabId);
  assert.equal(typed, 'alice');
});

test('a task longer than its request budget has old steps condensed by the extraction model, and the panel says so', async () => {
  await h.settings({ baseUrl: llm.baseUrl, model: 'mock-model', extractionModel: 'mock-summariser', requestBudget: 8000 });
  const site = await h.openFixture('login.html');
  await site.bringToFront();
  const panel = await h.openPanel();
  const before = llm.requests.length;
  let steps = 0;
  world.setPolicy((state, body) => {
    if (body.response_format?.json_schema?.name === 'history_summary') {
      return { output: { summary: 'SUMMARY-E2E: the agent waited on the sign-in page.' } };
    }
    steps += 1;
    if (steps > 11) return answer('Finish', [{ done: { text: 'Waited long enough.', success: true } }]);
    // Long goals make a long history: about 1,350 tokens a step (the smallest budget, 8,000,
    // leaves some 4,000 beside a request's fixed part).
    return answer(`Wait, round ${steps}. ${'Keep waiting. '.repeat(385)}`, [{ wait: { seconds: 0 } }]);
  });
  const final = await runTaskToEnd(panel, 'Wait eleven times, then finish', 120_000);
  assert.match(final, /Waited long enough\./);

  const bodies = llm.requests.slice(before).map((r) => r.body);
  const summaries = bodies.filter((b) => b.response_format?.json_schema?.name === 'history_summary');
  assert.equal(summaries.length, 1, 'one summary, once ten steps were kept');
  assert.equal(summaries[0].model, 'mock-summariser');
  const condensed = summaries[0].messages[1].content;
  assert.match(condensed, /Wait, round 1\b/);
  assert.match(condensed, /Wait, round 5\b/);
  assert.doesNotMatch(condensed, /Wait, round 6\b/, 'the last five steps are kept in full');

  const agent = bodies.filter((b) => b.response_format?.json_schema?.name === 'agent_output');
  const texts = agent.map((b) => b.messages[1].content);
  // Each request stays near its budget of 8,000 tokens (about four characters each; the schema
  // as sent is the provider's, a little larger than the one the core measures).
  for (const [i, b] of agent.entries()) {
    const chars = b.messages[0].content.length + texts[i].length + JSON.stringify(b.response_format).length;
    assert.ok(chars / 4 < 8_000 * 1.1, `request ${i + 1}: about ${Math.round(chars / 4)} tokens`);
  }
  const first = texts.findIndex((t) => t.includes('SUMMARY-E2E'));
  assert.equal(first, 10, 'step 11 is the first to show the summary');
  for (const text of texts.slice(first)) {
    assert.match(text, /<summary of steps 1–5>/);
    assert.doesNotMatch(text, /Wait, round 1\b/);
  }
  await panel.getByText('Steps 1–5 were condensed into a summary').waitFor({ timeout: 5_000 });
  await site.close();
  await panel.close();
});
