// Reading ahead (extension/content/indexer.js): after a click that changed the page in place,
// the frame reads itself at once for the look that follows. The look must still show the page
// as it is when the worker asks: these tests read the real state text the extension sends, and
// check the content script's bookkeeping in its own world.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf } from './lib/observe.mjs';
import { findIndex } from './lib/state.mjs';
import { answer } from './lib/mock-llm.mjs';

let o;

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
});

/** Evaluates `expression` in the content scripts' world of `page` and returns its value. */
async function inContentWorld(page, expression) {
  const cdp = await o.h.context.newCDPSession(page);
  try {
    const contexts = [];
    cdp.on('Runtime.executionContextCreated', ({ context }) => contexts.push(context));
    await cdp.send('Runtime.enable');
    const topFrame = contexts.find((c) => c.auxData?.isDefault)?.auxData?.frameId;
    const world = contexts.find((c) => c.auxData?.type === 'isolated' && c.auxData?.frameId === topFrame && c.name === 'Tabwright');
    assert.ok(world, `the content scripts' world is there: ${contexts.map((c) => `${c.name} (${c.auxData?.type})`).join(', ')}`);
    const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', { expression, contextId: world.id, awaitPromise: true, returnByValue: true });
    if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
    return result.value;
  } finally {
    await cdp.detach();
  }
}

test('a look after a click shows the page as it is when asked, read ahead or not', async () => {
  const page = await o.open('read-ahead.html');
  // How many looks were read ahead, asked of the content scripts before the task ends.
  let used = null;
  o.setPolicy(async (state) => {
    if (/More shown/.test(state)) {
      used = await inContentWorld(page, 'tabwright.aheadUsed ?? 0');
      return answer('Finish', [{ done: { text: 'Finished.', success: true } }]);
    }
    const step = !state.includes('Note shown') ? 'Show note' : !state.includes('Item added') ? 'Add an item' : 'Show more';
    const index = findIndex(state, `>${step}`);
    assert.ok(index !== null, `"${step}" is offered:\n${pageOf(state)}`);
    return answer('Act on the page', [{ click: { index } }]);
  });
  let states;
  try {
    ({ states } = await o.run(page, 'Show the note, add an item, then show more'));
  } finally {
    o.setPolicy(null);
  }
  assert.equal(states.length, 4, `three clicks, then done:\n${states.map(pageOf).join('\n---\n')}`);
  assert.match(pageOf(states[1]), /Note shown/);
  // The item the click added is marked new, and only in the look right after it.
  assert.match(pageOf(states[2]), /^\t*\*\[\d+\]<button>Item added$/m, pageOf(states[2]));
  assert.match(pageOf(states[3]), /More shown/);
  assert.match(pageOf(states[3]), /^\t*\[\d+\]<button>Item added$/m, pageOf(states[3]));
  // Clicks that changed the page in place, with nothing moving after them: their looks were
  // read ahead (unless the look came first, or the reading ahead grew too old while the worker
  // settled the click).
  assert.ok(used >= 1, `a look was read ahead (${used})`);
});

test('a snapshot read ahead is dropped when the page changes, scrolls, or the request differs, or a request\'s reading ran past it', async () => {
  const page = await o.open('read-ahead.html');
  await page.setViewportSize({ width: 800, height: 300 });
  const outcome = await o.whileTaskHolds(page, () => inContentWorld(page, `(async () => {
    const tw = globalThis.tabwright;
    const wanted = { viewportExpansion: 500, screen: null };
    const taken = async (change, request = wanted) => {
      tw.readAhead({ viewportExpansion: 500 });
      await change();
      const ahead = tw.takeAhead(request);
      return ahead ? (await ahead).nodes.length > 0 : false;
    };
    const nothing = () => {};
    const tick = () => new Promise((r) => setTimeout(r, 0));
    document.body.style.height = '3000px'; // room to scroll, made before any reading ahead
    await tick();
    const results = {
      untouched: await taken(nothing),
      afterATick: await taken(tick),
      textChanged: await taken(() => { document.getElementById('note').textContent = 'Changed'; }),
      attributeChanged: await taken(() => { document.getElementById('note').setAttribute('data-x', '1'); }),
      elementAdded: await taken(() => { document.getElementById('list').append(document.createElement('li')); }),
      scrolled: await taken(async () => { scrollBy(0, 40); await tick(); }),
      otherExpansion: await taken(nothing, { viewportExpansion: 0, screen: null }),
      forAFrame: await taken(nothing, { viewportExpansion: 500, screen: { top: 0, left: 0, bottom: 100, right: 100 } }),
      tooOld: await taken(() => new Promise((r) => setTimeout(r, 150))),
    };
    // A snapshot read ahead and dropped leaves "new" as it was: an element added before it is
    // still new in the next snapshot that is sent.
    await tw.snapshot(wanted);
    const button = document.createElement('button');
    button.textContent = 'Added later';
    document.body.append(button);
    tw.readAhead({ viewportExpansion: 500 });
    tw.dropAhead();
    const next = await tw.snapshot(wanted);
    results.stillNew = next.nodes.some((n) => n.new === true && n.tag === 'button' && /Added later/.test(n.text ?? ''));
    // Just after a click the request's reading waits for a paint, and the click's reading ahead
    // may run in that wait (a busy page, a quick look): what it saw is still new in the reading
    // that is sent.
    const clicked = document.createElement('button');
    clicked.textContent = 'Added by a click';
    document.body.append(clicked);
    tw.actedAt = performance.now();
    const requested = tw.snapshot(wanted);
    tw.readAhead({ viewportExpansion: 500 });
    const sent = await requested;
    results.newDespiteReadingAhead = sent.nodes.some((n) => n.new === true && n.tag === 'button' && /Added by a click/.test(n.text ?? ''));
    results.readingAheadDropped = tw.takeAhead(wanted) === null;
    return results;
  })()`));
  assert.deepEqual(outcome, {
    untouched: true,
    afterATick: true,
    textChanged: false,
    attributeChanged: false,
    elementAdded: false,
    scrolled: false,
    otherExpansion: false,
    forAFrame: false,
    tooOld: false,
    stillNew: true,
    newDespiteReadingAhead: true,
    readingAheadDropped: true,
  });
});
