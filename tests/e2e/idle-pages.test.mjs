// Nothing on ordinary pages while no task runs (extension/page-scripts.js): a page opened with
// no task running has the page's own addEventListener, attachShadow, alert, confirm, fetch and
// XMLHttpRequest and no Tabwright script; a task puts its scripts only in its own tabs, and takes them out of every
// page when it ends, the page's own functions back in place.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver } from './lib/observe.mjs';
import { pageAt } from './lib/harness.mjs';

let o;

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
});

/** What of Tabwright a page holds: in its own world, whether its functions are the browser's
 * (Function.prototype.toString says native code) and whether any of Tabwright's marks are
 * there; over CDP, whether the extension has a script world in its top frame, and if so
 * whether anything lives in it. */
async function footprint(page) {
  const own = await page.evaluate(() => {
    const native = (fn) => typeof fn === 'function' && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(fn));
    const onclick = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'onclick');
    return {
      addEventListener: native(EventTarget.prototype.addEventListener),
      attachShadow: native(Element.prototype.attachShadow),
      alert: native(window.alert),
      confirm: native(window.confirm),
      fetch: native(window.fetch),
      send: native(XMLHttpRequest.prototype.send),
      onclickSetter: native(onclick?.set),
      marks: [
        EventTarget.prototype[Symbol.for('tabwright.page-listeners')],
        Element.prototype[Symbol.for('tabwright.page-shadow-roots')],
        window[Symbol.for('tabwright.page-dialogs')],
        window[Symbol.for('tabwright.page-network')],
      ].filter((mark) => mark !== undefined).length,
    };
  });
  const cdp = await o.h.context.newCDPSession(page);
  try {
    const contexts = [];
    cdp.on('Runtime.executionContextCreated', ({ context }) => contexts.push(context));
    await cdp.send('Runtime.enable');
    const topFrame = contexts.find((c) => c.auxData?.isDefault)?.auxData?.frameId;
    const world = contexts.find((c) => c.auxData?.type === 'isolated' && c.auxData?.frameId === topFrame && c.name === 'Tabwright');
    let scripts = false;
    if (world) {
      const { result } = await cdp.send('Runtime.evaluate', { expression: 'globalThis.tabwright !== undefined', contextId: world.id, returnByValue: true });
      scripts = result.value;
    }
    return { ...own, world: Boolean(world), scripts };
  } finally {
    await cdp.detach();
  }
}

const UNTOUCHED = { addEventListener: true, attachShadow: true, alert: true, confirm: true, fetch: true, send: true, onclickSetter: true, marks: 0 };

/** Keeps the page's own functions, to compare after a task with what is there then. */
function keepOwnFunctions(page) {
  return page.evaluate(() => {
    window.ownFunctions = {
      addEventListener: EventTarget.prototype.addEventListener,
      attachShadow: Element.prototype.attachShadow,
      alert: window.alert,
      confirm: window.confirm,
      prompt: window.prompt,
      fetch: window.fetch,
      send: XMLHttpRequest.prototype.send,
      sendBeaconOwn: Object.hasOwn(navigator, 'sendBeacon'),
      onclickSetter: Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'onclick').set,
    };
  });
}

function ownFunctionsBack(page) {
  return page.evaluate(() => {
    const kept = window.ownFunctions;
    return {
      addEventListener: EventTarget.prototype.addEventListener === kept.addEventListener,
      attachShadow: Element.prototype.attachShadow === kept.attachShadow,
      alert: window.alert === kept.alert,
      confirm: window.confirm === kept.confirm,
      prompt: window.prompt === kept.prompt,
      fetch: window.fetch === kept.fetch,
      send: XMLHttpRequest.prototype.send === kept.send,
      sendBeacon: Object.hasOwn(navigator, 'sendBeacon') === kept.sendBeaconOwn,
      onclickSetter: Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'onclick').set === kept.onclickSetter,
    };
  });
}

const registered = () => o.panel.evaluate(async () => (await chrome.scripting.getRegisteredContentScripts()).map((s) => s.id));

test('a page opened while no task runs has its own functions and no Tabwright script', async () => {
  const page = await o.open('click-listener.html');
  await page.waitForLoadState('load');
  assert.deepEqual(await registered(), [], 'nothing is registered for pages');
  const seen = await footprint(page);
  assert.deepEqual({ ...seen, world: undefined, scripts: undefined }, { ...UNTOUCHED, world: undefined, scripts: undefined });
  assert.equal(seen.world, false, 'the extension has no script world in the page');
  // A page in a frame as well.
  const framed = await o.open('iframe-cross-origin.html');
  await framed.waitForLoadState('load');
  for (const frame of framed.frames()) {
    const marks = await frame.evaluate(() => [EventTarget.prototype, Element.prototype, window]
      .flatMap((o) => Object.getOwnPropertySymbols(o)).filter((s) => s.description?.startsWith('tabwright')).length);
    assert.equal(marks, 0, `no marks in ${frame.url()}`);
  }
  await page.close();
  await framed.close();
});

test('a task puts its scripts in its own tab only, and when it ends every page is as it was', async () => {
  const page = await o.open('click-listener.html');
  await page.waitForLoadState('load');
  await keepOwnFunctions(page);
  // The task looks once, then waits until the checks while it runs are done.
  const elsewhere = await o.whileTaskHolds(page, async () => {
    const during = await footprint(page);
    assert.equal(during.marks, 4, 'the task page has the page-world scripts');
    assert.equal(during.scripts, true, 'and the content scripts');
    assert.deepEqual((await registered()).sort(), ['tabwright-content', 'tabwright-page-world']);

    // A page opened meanwhile in another window: the registered scripts arrive, see that it is
    // not the task's tab, and go.
    const url = `${o.h.fixtures.url}/shadow-dom.html`;
    const besides = new Set(o.h.context.pages());
    await o.panel.evaluate((u) => chrome.windows.create({ url: u }), url);
    const other = await pageAt(o.h.context, url, { besides });
    await other.waitForLoadState('load');
    await other.waitForFunction(() => !EventTarget.prototype[Symbol.for('tabwright.page-listeners')], null, { timeout: 10_000 });
    const seen = await footprint(other);
    assert.deepEqual({ ...seen, world: undefined, scripts: undefined }, { ...UNTOUCHED, world: undefined, scripts: undefined });
    assert.equal(seen.scripts, false, 'nothing of the content scripts lives on in the other page');
    return other;
  }, 'Look at the page');
  await o.panel.locator('#log .final').last().waitFor({ timeout: 30_000 });
  await page.waitForFunction(() => !EventTarget.prototype[Symbol.for('tabwright.page-listeners')], null, { timeout: 10_000 });
  assert.deepEqual(await ownFunctionsBack(page), {
    addEventListener: true, attachShadow: true, alert: true, confirm: true, prompt: true, fetch: true, send: true, sendBeacon: true, onclickSetter: true,
  }, 'the task page has its own functions back');
  const afterwards = await footprint(page);
  assert.equal(afterwards.marks, 0);
  assert.equal(afterwards.scripts, false, 'the content scripts took themselves out');
  assert.deepEqual(await registered(), [], 'the registration went with the task');
  // The page's dialogs are its own again: an alert waits for a person.
  const dialog = page.waitForEvent('dialog', { timeout: 5_000 });
  page.evaluate(() => alert('Still there?')).catch(() => {});
  await (await dialog).dismiss();
  // And a page opened now gets nothing.
  const fresh = await o.open('click-listener.html');
  await fresh.waitForLoadState('load');
  const seen = await footprint(fresh);
  assert.equal(seen.world, false);
  assert.equal(seen.marks, 0);
  await fresh.close();
  await elsewhere.close();
  await page.close();
});
