// The side panel as a person uses it: the final answer formatted from markdown (and nothing the
// model or a page wrote can run or load anything there), and the progress of a running task —
// the step it is at and the tokens used so far — in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runTask, runTaskToEnd } from './lib/harness.mjs';
import { answer, newGate } from './lib/mock-llm.mjs';
import { startObserver } from './lib/observe.mjs';
import { findIndex, findField } from './lib/state.mjs';

let o;
let h;
let policy = null;

before(async () => {
  o = await startObserver();
  h = o.h;
  o.setPolicy((state, body) => policy(state, body));
});

after(async () => {
  await o?.close();
});

test('the final answer is markdown, shown formatted; scripts, images and unsafe links in it are taken out', async () => {
  const pixel = `${h.fixtures.url}/pixel.png?read=secret`;
  const answerText = [
    '## Cheapest flights',
    '',
    '| Airline | Price |',
    '| --- | --- |',
    '| TAP | **€89** |',
    '| Ryanair | €112 |',
    '',
    '- Leaves at `07:40`',
    '- [Booking page](https://example.com/book?id=7)',
    '',
    `![tracking](${pixel})`,
    '<img src="x" onerror="window.pwned = 1">',
    '<script>window.pwned = 2</script>',
    '[run me](javascript:window.pwned=3)',
    '<a href="https://example.com/x" onclick="window.pwned = 4">styled</a>',
  ].join('\n');
  policy = async () => answer('Report', [{ done: { text: answerText, success: true } }]);
  await o.open('login.html');
  const final = await runTaskToEnd(o.panel, 'Find the cheapest flight');
  assert.match(final, /Cheapest flights/);

  const box = o.panel.locator('.final').last();
  assert.equal(await box.locator('h2').innerText(), 'Cheapest flights');
  assert.deepEqual(await box.locator('table tr').evaluateAll((rows) => rows.map((r) => r.innerText.replace(/\s+/g, ' ').trim())),
    ['Airline Price', 'TAP €89', 'Ryanair €112']);
  assert.equal(await box.locator('td strong').innerText(), '€89');
  assert.equal(await box.locator('li code').innerText(), '07:40');
  const link = box.locator('a', { hasText: 'Booking page' });
  assert.equal(await link.getAttribute('href'), 'https://example.com/book?id=7');
  assert.equal(await link.getAttribute('target'), '_blank');
  assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');

  // Nothing active survived, and the image was never fetched.
  assert.equal(await box.locator('img, script, iframe').count(), 0);
  assert.equal(await box.locator('[onerror], [onclick]').count(), 0);
  assert.equal(await box.locator('a', { hasText: 'run me' }).count(), 0, 'a javascript: link is left as text');
  assert.match(await box.innerText(), /run me/);
  assert.match(await box.innerText(), /tracking/, 'an image is shown as its alt text');
  assert.equal(await o.panel.evaluate(() => window.pwned), undefined);
  assert.ok(!h.fixtures.log.some((line) => line.includes('/pixel.png')), `no request for the image: ${h.fixtures.log.join(', ')}`);
  await h.screenshot(o.panel, 'panel-markdown-answer');
});

test('a running task shows the step it is at and the tokens used so far, in light and dark', async () => {
  const gate = newGate();
  let calls = 0;
  policy = async (state) => {
    calls += 1;
    if (calls === 1) return answer('Type the name', [{ input: { index: findField(state, 'Username'), text: 'alice', clear: true } }]);
    await gate.promise;
    return answer('Finish', [{ done: { text: 'Typed **alice**.', success: true } }]);
  };
  await o.open('login.html');
  const panel = await h.openPanel();
  await runTask(panel, 'Type alice as the user name');
  await panel.locator('.step').nth(1).waitFor();
  const status = panel.locator('#status');
  // The panel draws the end of step 1 and the start of step 2 one draw apart at most (and it
  // opened on the last task's steps): wait for the second step's progress.
  await panel.waitForFunction(() => /^Step 2 of/.test(document.getElementById('status').textContent));
  assert.match(await status.innerText(), /^Step 2 of \d+ · [\d,]+ tokens$/);
  const tokens = Number((await status.innerText()).match(/([\d,]+) tokens/)[1].replace(/,/g, ''));
  assert.ok(tokens > 100, `the first step's tokens are counted: ${tokens}`);
  await h.screenshot(panel, 'panel-running-light');
  await panel.emulateMedia({ colorScheme: 'dark' });
  const background = await panel.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(background, 'rgb(247, 248, 250)', 'the panel follows the dark theme');
  await h.screenshot(panel, 'panel-running-dark');
  const earlier = await panel.locator('.final').count(); // the last task's answer, shown on opening
  gate.release();
  const final = panel.locator('.final').nth(earlier);
  await final.waitFor();
  assert.equal(await final.locator('strong').innerText(), 'alice');
  await h.screenshot(panel, 'panel-done-dark');
  await panel.setViewportSize({ width: 280, height: 700 });
  const overflow = await panel.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `nothing sticks out sideways at 280 px (${overflow} px)`);
  await h.screenshot(panel, 'panel-narrow-dark');
  await panel.close();
});

test('a keyboard shortcut opens the side panel as the toolbar button does', async () => {
  // The toolbar button opens the panel (set when the extension is installed); the shortcut is
  // the button's own command, so it does the same. Chrome reports the key it bound.
  const commands = await o.panel.evaluate(() => chrome.commands.getAll());
  const action = commands.find((c) => c.name === '_execute_action');
  assert.equal(action?.shortcut, 'Ctrl+Shift+Y', JSON.stringify(commands));
  const behavior = await o.panel.evaluate(() => chrome.sidePanel.getPanelBehavior());
  assert.equal(behavior.openPanelOnActionClick, true);
});

test('files are attached by picking them or dropping them on the task box, shown by name and size, taken off with ×, and refused past the bounds', async () => {
  const panel = o.panel;
  const chips = panel.locator('#attachments .chip');
  await panel.setInputFiles('#attach-input', [{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') }]);
  await chips.first().waitFor();
  // Dropped on the task box, as from the desktop.
  await panel.evaluate(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([new Uint8Array(3000)], 'scan.pdf', { type: 'application/pdf' }));
    const composer = document.getElementById('composer');
    for (const type of ['dragenter', 'dragover', 'drop']) {
      composer.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: transfer }));
    }
  });
  await chips.nth(1).waitFor();
  const shown = async () => (await chips.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  assert.deepEqual(await shown(), ['notes.txt 5 B ×', 'scan.pdf 3 KB ×']);
  await h.screenshot(panel, 'panel-attachments');
  // Too large: refused with a word why, the others kept.
  await panel.evaluate(() => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([new Uint8Array(11 * 1024 * 1024)], 'film.mp4', { type: 'video/mp4' }));
    document.getElementById('composer').dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: transfer }));
  });
  await panel.locator('#notice').filter({ hasText: 'film.mp4 is larger than 10 MB' }).waitFor();
  assert.equal(await chips.count(), 2);
  // Taken off one by one.
  await panel.getByRole('button', { name: 'Remove notes.txt' }).click();
  assert.deepEqual(await shown(), ['scan.pdf 3 KB ×']);
  await panel.getByRole('button', { name: 'Remove scan.pdf' }).click();
  assert.equal(await chips.count(), 0);
  assert.equal(await panel.locator('#attachments').isHidden(), true);
});
