// The hands as a person's: the click a content script makes is the click Chrome makes for a
// real mouse (compared event by event with Chrome's own, recorded from the debugger's
// Input.dispatchMouseEvent on the same page), focus goes only where Chrome puts it, a click
// whose only consequence is hover and focus styling counts as no effect, a click that changed
// nothing says so, and keys go one at a time. Every page element is found by its text in the
// state text the extension sends.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf } from './lib/observe.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex } from './lib/state.mjs';

let o;

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
});

const done = (text = 'Finished.') => answer('Finish', [{ done: { text, success: true } }]);

function mustFind(state, pattern, what) {
  const index = findIndex(state, pattern);
  assert.ok(index, `no ${what} (${pattern}) in:\n${pageOf(state)}`);
  return index;
}

/** The last step's results the model was told in a state text. */
const toldOf = (state) => /<last_step_results>\n([\s\S]*?)<\/last_step_results>/.exec(state)?.[1] ?? '';

/** One recorded event, with what can be compared between Chrome's click and the script's:
 * coordinates to the whole pixel (the two aim at the same point), pressure left out (Chrome's
 * debugger presses with none; a mouse presses with 0.5). */
function comparable(e) {
  const out = { type: e.type, target: e.target, related: e.related ?? null };
  if ('button' in e) {
    Object.assign(out, {
      button: e.button, buttons: e.buttons, detail: e.detail, bubbles: e.bubbles, cancelable: e.cancelable,
      composed: e.composed, view: e.view, x: Math.round(e.clientX), y: Math.round(e.clientY),
    });
  }
  if ('pointerId' in e) Object.assign(out, { pointerId: e.pointerId, pointerType: e.pointerType, isPrimary: e.isPrimary, width: e.width, height: e.height });
  return out;
}

const TARGETS = ['plain', 'button', 'unfocusable', 'cancels', 'cancels-pointer', 'link'];
const WORDS = {
  plain: 'Plain target', button: 'Button target', unfocusable: 'Unfocusable target', cancels: 'Cancels mousedown',
  'cancels-pointer': 'Cancels pointerdown', link: 'A link',
};

async function reset(page) {
  await page.evaluate(() => {
    history.replaceState(null, '', location.pathname);
    window.recorded = [];
  });
}

const middle = (page, id) => page.evaluate((id) => {
  const r = document.getElementById(id).getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
}, id);

test("a script's click is Chrome's own click: the pointer's way there, the press, focus where Chrome puts it, the release and the click, event by event", async () => {
  const page = await o.open('hands/event-recorder.html');
  // Chrome's own, through the debugger, as Tabwright's trusted click sends it: from the field
  // where focus starts to the first target, from there to the next, and so on. (Each element
  // is clicked once: an element clicked again within a few steps gets a real click at once.)
  const cdp = await o.h.context.newCDPSession(page);
  const mouse = async ({ x, y }) => {
    await cdp.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y });
    await cdp.send('Input.dispatchMouseEvent', { type: 'mousePressed', x, y, button: 'left', buttons: 1, clickCount: 1 });
    await cdp.send('Input.dispatchMouseEvent', { type: 'mouseReleased', x, y, button: 'left', buttons: 0, clickCount: 1 });
  };
  const chrome = {};
  await mouse(await middle(page, 'start-field'));
  for (const id of TARGETS) {
    await reset(page);
    await mouse(await middle(page, id));
    chrome[id] = await page.evaluate(() => window.recorded);
  }
  await cdp.detach();
  await reset(page);

  // The script's, in a task: the model clicks the field, then each target in turn.
  const script = {};
  const plan = [['start'], ...TARGETS.map((id) => ['target', id])];
  let step = 0;
  o.setPolicy(async (state) => {
    const [what, id] = plan[step] ?? [];
    if (step > 0 && plan[step - 1][0] === 'target') script[plan[step - 1][1]] = await page.evaluate(() => window.recorded);
    step++;
    if (!what) return done();
    if (what === 'start') return answer('Start from the field', [{ click: { index: mustFind(state, "aria-label='Where focus starts'", 'the field') } }]);
    await reset(page);
    return answer(`Click ${id}`, [{ click: { index: mustFind(state, new RegExp(`>${WORDS[id]}$`), id) } }]);
  });
  try {
    await o.run(page, 'Click each target');
  } finally {
    o.setPolicy(null);
  }
  for (const id of TARGETS) {
    const theirs = chrome[id].map(comparable);
    const ours = (script[id] ?? []).map(comparable);
    assert.deepEqual(ours, theirs, `the events of a click on ${id}`);
    // One screen offset for every event of one click (a page may compare the two).
    const offsets = new Set(script[id].filter((e) => e.type.startsWith('mouse')).map((e) => `${e.screenX - e.clientX},${e.screenY - e.clientY}`));
    assert.equal(offsets.size, 1, `one screen offset in ${id}: ${[...offsets]}`);
    const move = script[id].find((e) => e.type === 'pointermove');
    const chromeMove = chrome[id].find((e) => e.type === 'pointermove');
    assert.ok(Math.abs(move.movementX - chromeMove.movementX) <= 2 && Math.abs(move.movementY - chromeMove.movementY) <= 2,
      `the pointer travels as far: ${JSON.stringify([move.movementX, move.movementY])} and ${JSON.stringify([chromeMove.movementX, chromeMove.movementY])}`);
  }
  await page.close();
});

test('a click that only lights an option up is no effect: the real click follows in the same step and says so; a click that changed nothing says that', async () => {
  const page = await o.open('hands/highlight-then-choose.html');
  let step = 0;
  const states = [];
  o.setPolicy((state) => {
    states.push(state);
    step++;
    if (step === 1) return answer('Choose Porto', [{ click: { index: mustFind(state, />Porto$/, 'Porto') } }]);
    if (step === 2) return answer('Try the quiet one', [{ click: { index: mustFind(state, />Nothing here$/, 'the quiet element') } }]);
    return done();
  });
  try {
    await o.run(page, 'Choose Porto');
  } finally {
    o.setPolicy(null);
  }
  assert.equal(await page.locator('#chosen').innerText(), 'Porto', 'chosen, in the one step');
  assert.match(toldOf(states[1]), /Clicked .* \(the page ignored a script click, so it was repeated as a real mouse click\)/);
  assert.doesNotMatch(toldOf(states[1]), /nothing on the page changed/);
  assert.match(toldOf(states[2]), /Clicked .*but nothing on the page changed/s, 'the click that did nothing says so');
  await page.close();
});

test('a list that opens on a cancelled mousedown stays open, and its item is taken by the pointer that went over it, without a real click', async () => {
  const page = await o.open('hands/needs-movement.html');
  const states = [];
  o.setPolicy((state) => {
    states.push(state);
    if (/Chosen: Banana/.test(state)) return done();
    if (!/>Banana$/m.test(pageOf(state))) return answer('Open the list', [{ click: { index: mustFind(state, />Fruit$/, 'the toggle') } }]);
    return answer('Take Banana', [{ click: { index: mustFind(state, />Banana$/, 'Banana') } }]);
  });
  try {
    await o.run(page, 'Choose Banana');
  } finally {
    o.setPolicy(null);
  }
  assert.equal(await page.locator('#chosen').innerText(), 'Banana');
  assert.equal(states.length, 3, 'open, choose, done');
  for (const state of states) assert.doesNotMatch(toldOf(state), /repeated as a real mouse click|nothing on the page changed/);
  await page.close();
});

test('keys go one at a time, each after the page drew what the last one changed: a type-ahead list loses none', async () => {
  const page = await o.open('hands/type-ahead.html');
  const states = [];
  o.setPolicy((state) => {
    states.push(state);
    if (states.length === 1) {
      return answer('Type and choose', [
        { click: { index: mustFind(state, 'label=Town', 'the town field') } },
        { send_keys: { keys: 'p o r ArrowDown ArrowDown Enter' } },
      ]);
    }
    return done();
  });
  try {
    await o.run(page, 'Choose Portimão');
  } finally {
    o.setPolicy(null);
  }
  assert.equal(await page.locator('#chosen').innerText(), 'Portimão', `the field says ${await page.locator('#town').inputValue()}; told: ${toldOf(states[1])}`);
  await page.close();
});

test('select_dropdown opens a select that opens on focus with a press, and one that takes only real presses with real clicks, and says Chose only when the control shows it', async () => {
  const page = await o.open('hands/stubborn-selects.html');
  const states = [];
  o.setPolicy((state) => {
    states.push(state);
    if (states.length === 1) return answer('Choose the colour', [{ select_dropdown: { index: mustFind(state, /label=Colour/, 'Colour'), text: 'Blue' } }]);
    if (states.length === 2) return answer('Choose the size', [{ select_dropdown: { index: mustFind(state, /label=Size/, 'Size'), text: 'Large' } }]);
    return done();
  });
  try {
    await o.run(page, 'Choose blue, large');
  } finally {
    o.setPolicy(null);
  }
  assert.equal(await page.locator('#saved').innerText(), 'Chosen: colour=Blue, size=Large');
  assert.match(toldOf(states[1]), /Blue/);
  assert.doesNotMatch(toldOf(states[1]), /no options|not a dropdown|does not show/);
  assert.match(toldOf(states[2]), /Large/);
  assert.doesNotMatch(toldOf(states[2]), /no options|not a dropdown|does not show/);
  assert.equal(states.length, 3);
  await page.close();
});
