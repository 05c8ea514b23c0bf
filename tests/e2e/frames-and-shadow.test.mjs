// Iframes (same-origin, cross-origin out of process, nested) and shadow DOM (open, closed,
// slotted): all stitched into one numbering in page order, and actions reach the element in
// its own frame or shadow root.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf, lineWith } from './lib/observe.mjs';
import { findIndex } from './lib/state.mjs';

let o;

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
});

/** The page lines in order, without the start/end markers. */
function lines(state) {
  return pageOf(state).split('\n').filter((l) => l && !l.startsWith('[Start') && !l.startsWith('[End') && !l.startsWith('...'));
}

function indexOfLine(all, needle) {
  const i = all.findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `"${needle}" in:\n${all.join('\n')}`);
  return i;
}

test('a same-origin iframe is stitched in page order, one level deeper', async () => {
  const page = await o.open('iframe-same-origin.html');
  const all = lines(await o.look(page));
  const before = indexOfLine(all, 'Link before the frame');
  const frame = indexOfLine(all, "<iframe src='http://127.0.0.1");
  const button = indexOfLine(all, 'Button inside the frame');
  const after = indexOfLine(all, 'Link after the frame');
  assert.ok(before < frame && frame < button && button < after, all.join('\n'));
  assert.match(all[button], /^\t\[\d+\]<button/);
  assert.match(all[indexOfLine(all, 'Text inside the frame')], /^\tText inside the frame/);
  await page.close();
});

test('a cross-origin iframe is read through its own content script and its button can be clicked', async () => {
  const page = await o.open('iframe-cross-origin.html');
  const { states, final } = await o.actUntil(page, 'Click the button in the payment frame', /Frame button was clicked/,
    (s) => [{ click: { index: findIndex(s, 'Button inside the frame') } }]);
  const all = lines(states[0]);
  assert.ok(indexOfLine(all, `<iframe src='${o.h.fixtures.otherUrl}/frame-content.html'>`) < indexOfLine(all, 'Button inside the frame'));
  assert.match(final, /Finished\./);
  assert.equal(states.length, 2, 'one click, then the model saw the frame say so');
  const frame = page.frames().find((f) => f.url().startsWith(o.h.fixtures.otherUrl));
  assert.equal(await frame.textContent('#out'), 'Frame button was clicked');
  await page.close();
});

test('nested iframes across origins are stitched two levels deep with unique numbers', async () => {
  const page = await o.open('iframe-nested.html');
  await page.waitForFunction(() => document.querySelector('iframe')?.contentWindow !== null);
  let state = await o.look(page);
  for (let i = 0; i < 20 && !/Button inside the frame/.test(state); i++) {
    await new Promise((r) => setTimeout(r, 250)); // the innermost frame may still be loading
    state = await o.look(page);
  }
  const all = lines(state);
  assert.match(all[indexOfLine(all, 'Outer link')], /^\[\d+\]/);
  assert.match(all[indexOfLine(all, 'Middle link')], /^\t\[\d+\]/);
  assert.match(all[indexOfLine(all, 'Button inside the frame')], /^\t\t\[\d+\]/);
  const numbers = all.map((l) => /^\t*\*?\[(\d+)\]/.exec(l)?.[1]).filter(Boolean);
  assert.equal(new Set(numbers).size, numbers.length, `numbers are unique across frames: ${numbers}`);
  await page.close();
});

test('frames that never answer are shown unread; the live one is read; the page is whole', async () => {
  // Loaded before the task, the page gets the scripts in all its frames at the task's first
  // look; loaded during it, each frame gets them as it loads. Either way a document a script
  // wrote is read and a 204 leaves an empty frame; Chrome's error page never answers.
  const before = await o.open('iframe-dead.html');
  await before.waitForLoadState('load');
  const looks = [await o.look(before), await o.look(before), (await o.loadDuringTask('iframe-dead.html')).states[0]];
  for (const state of looks) {
    const all = lines(state);
    const live = indexOfLine(all, `<iframe src='${o.h.fixtures.otherUrl}/frame-content.html'>`);
    assert.match(all[live + 2], /^\t\[\d+\]<button>Button inside the frame$/, all.join('\n'));
    const unread = all.filter((l) => l === '<iframe> (its content could not be read)');
    assert.equal(unread.length, 1, `the error page:\n${all.join('\n')}`);
    assert.match(all[indexOfLine(all, 'Written button')], /^\t\[\d+\]<button>/, all.join('\n'));
    assert.match(all[indexOfLine(all, 'Link below the frames')], /^\[\d+\]<a>/);
  }
  await before.close();
});

test('an ad frame that answers for another cannot take its place: the payment frame is read where it is, and a real click lands in it', async () => {
  const page = await o.open('iframe-hostile.html');
  await page.waitForLoadState('load');
  const { states } = await o.actUntil(page, 'Pay', /Paid/, (s) => [{ click: { index: findIndex(s, 'Pay 20 euros') } }]);
  const all = lines(states[0]);
  const pay = indexOfLine(all, 'Pay 20 euros');
  const payFrame = indexOfLine(all, `<iframe src='${o.h.fixtures.otherUrl}/frame-pay.html'>`);
  assert.equal(pay, payFrame + 1, `the payment button is under the payment frame:\n${all.join('\n')}`);
  const adFrame = all.findIndex((l) => l.startsWith('<iframe'));
  assert.ok(adFrame < payFrame, all.join('\n'));
  assert.ok(!/frame-pay/.test(all[adFrame]), `the ad's place does not show the payment frame: ${all[adFrame]}`);
  // The button takes only a person's click: the worker clicked it through the debugger, at the
  // payment frame's place in the window.
  const payFrameHandle = page.frames().find((f) => f.url().endsWith('/frame-pay.html'));
  assert.equal(await payFrameHandle.textContent('#paid'), 'Paid');
  assert.match(states.at(-1), /repeated as a real mouse click/);
  const adHandle = page.frames().find((f) => f.url().endsWith('/frame-hostile.html'));
  assert.notEqual(await adHandle.title(), 'Ad clicked');
  await page.close();
});

test('open and closed shadow roots and slotted content are indexed in place', async () => {
  // Loaded while the task runs, so the listener the page adds inside its closed root is seen.
  const { page, states: [state] } = await o.loadDuringTask('shadow-dom.html');
  for (const text of ['Open shadow button', 'Closed shadow button', 'Slotted light button', 'Closed tile with listener', 'Save draft']) {
    assert.match(lineWith(state, text) ?? '', /^\t*\[\d+\]</, `${text} is indexed:\n${pageOf(state)}`);
  }
  assert.match(lineWith(state, 'Closed tile with listener'), /^\t*\[\d+\]<div>Closed tile with listener$/,
    'the element with the listener inside the closed root is indexed, not its host');
  assert.equal(lineWith(state, '<closed-widget'), undefined, 'the host itself is not an interaction');
  assert.match(lineWith(state, 'Save draft'), /<button>Save draft$/, 'a shadow button labelled by slotted text');
  assert.ok(lineWith(state, 'Text in a display-contents wrapper'), 'text under display: contents is shown');
  assert.ok(lineWith(state, 'Card heading in shadow'), 'text inside a shadow root is shown');
  const all = lines(state);
  assert.ok(indexOfLine(all, 'Card heading in shadow') < indexOfLine(all, 'Light text in card'), 'slotted content appears where the slot is');
  assert.ok(indexOfLine(all, 'Light text in card') < indexOfLine(all, 'Slotted light button'), 'named slot after the default slot');
  await page.close();
});

test('a closed shadow root the page attaches after a look is seen by the next look', async () => {
  // The indexer asks chrome.dom about each element once; a root attached later, to a plain div
  // it has already asked about, must still be found.
  const page = await o.open('shadow-dom.html');
  await page.evaluate(() => {
    const host = document.createElement('div');
    host.id = 'late-host';
    document.body.append(host);
  });
  const first = await o.look(page);
  assert.equal(lineWith(first, 'Late closed button'), undefined);
  await page.evaluate(() => {
    const root = document.getElementById('late-host').attachShadow({ mode: 'closed' });
    root.innerHTML = '<button>Late closed button</button>';
  });
  const second = await o.look(page);
  assert.match(lineWith(second, 'Late closed button') ?? '', /^\t*\*?\[\d+\]<button>Late closed button$/, pageOf(second));
  assert.equal(await page.evaluate(() => Element.prototype.attachShadow.name), 'attachShadow', 'the page sees attachShadow as before');
  await page.close();
});

test('a button inside a closed shadow root can be clicked', async () => {
  const page = await o.open('shadow-dom.html');
  const { states } = await o.actUntil(page, 'Click the closed shadow button', /Closed shadow button was clicked/,
    (s) => [{ click: { index: findIndex(s, 'Closed shadow button') } }]);
  assert.equal(states.length, 2, 'one click, then the model saw the result');
  assert.equal(await page.textContent('#result'), 'Closed shadow button was clicked');
  await page.close();
});

test('a tall embedded frame is listed only as far as the person can see it', async () => {
  const page = await o.open('iframe-tall.html');
  let state = await o.look(page);
  for (let i = 0; i < 20 && !/Frame row 1$/m.test(state); i++) {
    await new Promise((r) => setTimeout(r, 250));
    state = await o.look(page);
  }
  // The screen is 900 px tall (and nothing beyond it is listed by default): rows 1 to 5, of
  // 200 px each below a line of text, are on it.
  const row = (s, n) => pageOf(s).split('\n').find((l) => l.endsWith(`>Frame row ${n}`));
  assert.match(row(state, 1) ?? '', /^\t\[\d+\]<button/);
  assert.match(row(state, 4) ?? '', /^\t\[\d+\]<button/);
  assert.equal(row(state, 6), undefined, `rows below the screen are not listed:\n${pageOf(state)}`);
  assert.equal(row(state, 15), undefined);
  await page.evaluate(() => scrollTo(0, 2000));
  const scrolled = await o.look(page);
  assert.match(row(scrolled, 12) ?? '', /\[\d+\]<button/, 'after scrolling the page, the frame rows now on screen are listed');
  assert.equal(row(scrolled, 1), undefined);
  await page.close();
});
