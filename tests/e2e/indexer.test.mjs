// The eyes on fixture pages, one case each: what is indexed, what is not, and why. Every
// assertion reads the real state text the extension sends to the LLM.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf, lineWith } from './lib/observe.mjs';
import { answer } from './lib/mock-llm.mjs';
import { findIndex, findField } from './lib/state.mjs';

let o;

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
});

/** Asserts the line for `text` is an indexed element line. */
function assertIndexed(state, text) {
  const line = lineWith(state, text);
  assert.ok(line, `"${text}" is in the page:\n${pageOf(state)}`);
  assert.match(line, /^\t*\*?\[\d+\]</, `"${text}" is an indexed element: ${line}`);
  return line;
}

function assertNotIndexed(state, text) {
  const line = lineWith(state, text);
  assert.ok(!line || !/^\t*\*?\[\d+\]</.test(line), `"${text}" must not be indexed: ${line}`);
}

function assertAbsent(state, text) {
  assert.ok(!pageOf(state).includes(text), `"${text}" must not be shown:\n${pageOf(state)}`);
}

test('hidden, zero-size, disabled, inert and far-away elements are not indexed', async () => {
  const page = await o.open('hidden-elements.html');
  const state = await o.look(page);
  assertIndexed(state, 'Visible button');
  for (const hidden of ['Display none button', 'Visibility hidden button', 'Zero size button',
    'Hidden attribute button', 'Link in a hidden parent', 'Link in content-visibility hidden',
    'secret-token', 'Far below link']) {
    assertAbsent(state, hidden);
  }
  // Transparent, but a click at its place lands on it: there for clicking (visibility.js).
  assertIndexed(state, 'Opacity zero button');
  assertIndexed(state, 'Link in a transparent parent');
  assertNotIndexed(state, 'Disabled button');
  assertNotIndexed(state, 'Button in a disabled fieldset');
  assertNotIndexed(state, 'Inert button');
  assert.match(assertIndexed(state, 'Close panel'), /<svg role=button>Close panel$/, 'an svg icon button is a control, named by its label');
  assert.ok(lineWith(state, 'Some visible paragraph text.'), 'free text is shown');
  assertNotIndexed(state, 'Some visible paragraph text.');
  await page.close();
});

test('a link that wraps over two lines is indexed, and a real click aimed at one of its lines follows it', async () => {
  const page = await o.open('link-wrapping.html');
  const state = await o.look(page);
  assert.match(assertIndexed(state, 'the full quarterly summary'), /<a\b/);
  assertIndexed(state, 'A short link');
  assertIndexed(state, 'Why the river changed its course twice');
  // This link answers only trusted clicks: the worker repeats the click through the debugger,
  // at a point of the link (the middle of its box is the paragraph's own words).
  const { states } = await o.actUntil(page, 'Open the long read', /Title: Opened the long read/,
    (s) => [{ click: { index: findIndex(s, 'Why the river changed its course twice') } }]);
  assert.equal(await page.title(), 'Opened the long read');
  assert.match(states.at(-1), /repeated as a real mouse click/);
  await page.close();
});

test('a link around blocks whose row is covered in the middle is indexed by its words, and a real click aims at them', async () => {
  const page = await o.open('block-link-covered.html');
  const state = await o.look(page);
  assert.match(assertIndexed(state, 'Product categories'), /<a\b/);
  assert.match(assertIndexed(state, 'Picked for you'), /<a\b/);
  // This one answers only trusted clicks: the worker's real click has to land on its words.
  const { states } = await o.actUntil(page, 'Open the picks', /Title: Opened the picks/,
    (s) => [{ click: { index: findIndex(s, 'Picked for you') } }]);
  assert.equal(await page.title(), 'Opened the picks');
  assert.match(states.at(-1), /repeated as a real mouse click/);
  await page.close();
});

test('transparent links over cards are indexed with their words; a transparent link clicks pass through is not', async () => {
  const page = await o.open('stretched-links.html');
  const state = await o.look(page);
  assertIndexed(state, 'Read about mountain cabins');
  assertIndexed(state, 'Read about river walks');
  assertIndexed(state, 'Continue reading');
  assertAbsent(state, 'Unreachable ghost link');
  await o.actUntil(page, 'Open the cabins article', /URL: .*\/cabins/,
    (s) => [{ click: { index: findIndex(s, 'Read about mountain cabins') } }]);
  assert.match(page.url(), /\/cabins$/);
  await page.close();
});

test('anchors without href: a named anchor is a place, not a control; any other is offered', async () => {
  const page = await o.open('anchors-without-href.html');
  const state = await o.look(page);
  assert.ok(lineWith(state, 'Named anchor heading'), 'its words are shown');
  assertNotIndexed(state, 'Named anchor heading');
  for (const text of ['Placeholder anchor text', 'Anchor with an onclick', 'Anchor with a button role', 'Focusable anchor',
    'Anchor with a pointer cursor', 'Anchor with an href']) {
    assertIndexed(state, text);
  }
  await page.close();
});

test('visually hidden text is not shown as page text, but still names the control it is in', async () => {
  const page = await o.open('visually-hidden.html');
  const state = await o.look(page);
  assert.ok(lineWith(state, 'Showing flights to Lisbon.'));
  assertAbsent(state, 'announced to screen readers');
  assertAbsent(state, 'Screen-reader note');
  assert.ok(lineWith(state, 'Prices include taxes.'));
  assert.match(assertIndexed(state, 'Close the filters'), /<button>✕ Close the filters$/);
  await page.close();
});

test('a modal covering the page hides what is under it', async () => {
  const page = await o.open('modal-covering.html');
  const state = await o.look(page);
  assertIndexed(state, 'Accept cookies');
  assertIndexed(state, 'Reject cookies');
  assertAbsent(state, 'Home link under the modal');
  assertAbsent(state, 'Buy now under the modal');
  assert.ok(lineWith(state, 'We use cookies.'));
  await page.close();
});

test('a cursor-pointer card is one element; a link inside it is its own; inherited pointers are not', async () => {
  const page = await o.open('cursor-pointer.html');
  const state = await o.look(page);
  const card = assertIndexed(state, 'Pointer card');
  assert.match(card, /Pointer card with inherited pointer text/, 'the card owns the text inside it');
  const details = assertIndexed(state, 'Details link in card');
  assert.match(details, /^\t\[/, 'the nested link is indented under the card');
  assertIndexed(state, 'Only a pointer cursor');
  assertNotIndexed(state, 'Plain box without pointer');
  assert.match(assertIndexed(state, 'Span inside a link'), /<a>Span inside a link$/);
  await page.close();
});

test('a div with only an addEventListener click handler is indexed, and clicking it works', async () => {
  // Loaded while the task runs: the page's world has the task's listener record from its start.
  const { page, states } = await o.loadDuringTask('click-listener.html', {
    doneWhen: /Listener div was clicked/,
    act: (s) => [{ click: { index: findIndex(s, 'Div with a click listener') } }],
  });
  assertIndexed(states[0], 'Div with a click listener');
  assertIndexed(states[0], 'Div with an onclick property');
  assertNotIndexed(states[0], 'Div without any listener');
  assert.equal(await page.textContent('#result'), 'Listener div was clicked');
  await page.close();
});

test('on a page loaded before the task, the on-click properties it set are found, and so is a listener it adds during the task', async () => {
  const page = await o.open('click-listener.html');
  await page.evaluate(() => {
    // Added once the task's scripts are in the page (its first look injects them).
    const timer = setInterval(() => {
      if (!EventTarget.prototype[Symbol.for('tabwright.page-listeners')]) return;
      clearInterval(timer);
      const late = document.createElement('div');
      late.textContent = 'Div given a listener during the task';
      late.addEventListener('click', () => { document.getElementById('result').textContent = 'Late div was clicked'; });
      document.body.append(late);
    }, 20);
  });
  const { states } = await o.actUntil(page, 'Click the late div', /Late div was clicked/, (s) => {
    const index = findIndex(s, 'Div given a listener during the task');
    return index === null ? [{ wait: { seconds: 1 } }] : [{ click: { index } }];
  });
  assertIndexed(states[0], 'Div with an onclick property');
  assertNotIndexed(states[0], 'Div without any listener');
  assert.equal(await page.textContent('#result'), 'Late div was clicked');
  await page.close();
});

test('a React-style controlled input takes typed text', async () => {
  const page = await o.open('react-controlled-input.html');
  const { states } = await o.actUntil(page, 'Type Ada as the name', /Hello, Ada/,
    (s) => [{ input: { index: findField(s, 'Name'), text: 'Ada', clear: null } }]);
  assert.equal(await page.textContent('#greeting'), 'Hello, Ada');
  assert.match(lineWith(states[1], 'placeholder=Name'), /value=Ada/);
  await page.close();
});

test('a contenteditable editor is indexed and takes typed text', async () => {
  const page = await o.open('contenteditable.html');
  const { states } = await o.actUntil(page, 'Write a note', /Saved: Hello from the agent/,
    (s) => [{ input: { index: findIndex(s, "aria-label='Note editor'"), text: 'Hello from the agent', clear: true } }]);
  assert.match(assertIndexed(states[0], "aria-label='Note editor'"), /contenteditable=true/);
  assert.equal(await page.textContent('#mirror'), 'Saved: Hello from the agent');
  await page.close();
});

test('a select shows its chosen option; a closed details shows its summary only', async () => {
  const page = await o.open('select-and-details.html');
  const state = await o.look(page);
  assert.match(assertIndexed(state, '<select'), /name=country\b.* value=Spain/);
  assert.match(assertIndexed(state, 'Shipping details'), /<summary aria-expanded=false>Shipping details/);
  assertAbsent(state, 'Return policy');
  await page.close();
});

test('a sticky header hides the row under it', async () => {
  const page = await o.open('sticky-header.html');
  await page.evaluate(() => scrollTo(0, 400));
  const covered = await page.evaluate(() => {
    const header = document.querySelector('header').getBoundingClientRect();
    return [...document.querySelectorAll('li a')].map((a) => [a.textContent, a.getBoundingClientRect()])
      .filter(([, r]) => r.top >= header.top && r.bottom <= header.bottom).map(([t]) => t);
  });
  assert.ok(covered.length > 0, 'the fixture puts a row under the header');
  const state = await o.look(page);
  assertIndexed(state, 'Header home');
  assertIndexed(state, 'Header cart');
  for (const text of covered) assert.ok(!new RegExp(`>${text}$`, 'm').test(pageOf(state)), `${text} is under the header`);
  assertIndexed(state, 'Row link 30');
  await page.close();
});

test('a scrollable container is indexed with how far it scrolls, and does not swallow what is in it', async () => {
  const page = await o.open('scroll-container.html');
  const state = await o.look(page);
  assert.match(assertIndexed(state, "aria-label=Messages"), /\|scroll: 0 px above, \d+ px below\|/);
  assert.match(assertIndexed(state, '>Message 1'), /^\t\[/, 'items are nested under the list');
  assert.match(lineWith(state, 'You have 3 unread messages.'), /^\tYou have 3 unread messages\.$/, 'its text stays free text, nested');
  assertIndexed(state, 'Message from Alice');
  await page.close();
});

test('an infinite-scroll list: indices stay, new items are marked new, scroll is reported', async () => {
  const page = await o.open('infinite-scroll.html');
  const { states } = await o.actUntil(page, 'Scroll to the end of the feed', />Post number 11$/m,
    () => [{ scroll: { down: true, pages: 10, index: null } }]);
  const first = states[0];
  assert.match(pageOf(first), /^\.\.\. \d+ px below \.\.\.$/m);
  const post1 = assertIndexed(first, '>Post number 1');
  const second = states.find((s) => />Post number 11$/m.test(pageOf(s)));
  assert.match(pageOf(second), /^\.\.\. \d+ px above \.\.\.$/m);
  const post11 = assertIndexed(second, '>Post number 11');
  assert.match(post11, /^\*\[/, 'a post loaded since the last step is marked new');
  const post1Again = pageOf(second).split('\n').find((l) => l.endsWith('>Post number 1'));
  if (post1Again) assert.equal(post1Again.replace(/^\*/, ''), post1.replace(/^\*/, ''), 'post 1 keeps its index');
  await page.close();
});

test('a page with 20,000 elements is indexed around the viewport and the prompt stays bounded (speed: scripts/bench dom)', async () => {
  const page = await o.h.context.newPage();
  await page.goto(`${o.h.fixtures.url}/large?n=20000`);
  const state = await o.look(page);
  assertIndexed(state, '>Item 0');
  assert.ok(!/>Action 1997$/m.test(pageOf(state)), 'far below is not listed');
  assert.ok(pageOf(state).length < 40_000, `bounded: ${pageOf(state).length} chars`);
  await page.close();
});

test('highlights number the elements during a task, never take a click, and go when it ends', async () => {
  const page = await o.open('click-listener.html');
  let release;
  const held = new Promise((r) => { release = r; });
  o.setPolicy(async () => {
    await held;
    return answer('Done', [{ done: { text: 'looked', success: true } }]);
  });
  await page.bringToFront();
  await o.panel.bringToFront();
  await o.panel.fill('#task', 'Look with highlights');
  await o.panel.press('#task', 'Enter');
  await page.waitForFunction(() => document.querySelector('tabwright-highlights') !== null, null, { timeout: 10_000 });
  const hit = await page.evaluate(() => {
    const el = document.getElementById('listening');
    const r = el.getBoundingClientRect();
    return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === el;
  });
  assert.equal(hit, true, 'the highlight layer does not intercept clicks');
  release();
  await page.waitForFunction(() => document.querySelector('tabwright-highlights') === null, null, { timeout: 10_000 });
  o.setPolicy(null);
  await page.close();
});

test('a label and its visible input are one interaction; a custom switch is clicked through its label; a transparent upload input is offered', async () => {
  const page = await o.open('label-and-checkbox.html');
  const state = await o.look(page);
  assert.match(assertIndexed(state, 'placeholder=you@example.com'), /label=Email\b/, 'a field is named by its label');
  assertNotIndexed(state, 'Email');
  // An aria-label names a field before any <label> does (accessible name computation).
  const search = assertIndexed(state, "aria-label='Search or jump to'");
  assert.doesNotMatch(search, /label='?In this|All GitHub/, `the label around it does not name it: ${search}`);
  const label = assertIndexed(state, 'Send me news');
  assert.match(label, /<label>/, 'the label of the invisible checkbox is what gets a number');
  assert.match(assertIndexed(state, 'aria-label=Photo'), /<input type=file/);
  assertIndexed(state, 'name=card');
  assert.ok(!state.includes('4111'), 'a payment-card value never leaves the page');
  assert.ok(!state.includes('hunter2-prefilled'), 'a password value never leaves the page');

  await o.actUntil(page, 'Subscribe to news', /News: on/, (s) => [{ click: { index: findIndex(s, 'Send me news') } }]);
  assert.equal(await page.textContent('#state'), 'News: on');
  await page.close();
});

test('viewport expansion -1 lists the whole page; highlights switched off in options are not drawn', async () => {
  const settings = { baseUrl: o.llm.baseUrl, model: 'mock-model' };
  await o.h.settings({ ...settings, viewportExpansion: -1, highlights: false });
  try {
    const page = await o.open('hidden-elements.html');
    let sawHighlights = false;
    o.setPolicy(async () => {
      sawHighlights = await page.evaluate(() => document.querySelector('tabwright-highlights') !== null);
      return answer('Done', [{ done: { text: 'looked', success: true } }]);
    });
    const { states } = await o.run(page);
    o.setPolicy(null);
    assertIndexed(states[0], 'Far below link');
    assert.equal(sawHighlights, false);
    await page.close();
  } finally {
    await o.h.settings(settings);
  }
});

test('event delegation: a click listener on the app root or the body is not a button; the items inside are', async () => {
  const page = await o.open('event-delegation.html');
  const state = await o.look(page);
  assertIndexed(state, 'Open product A');
  assertIndexed(state, 'Open product B');
  assert.ok(lineWith(state, 'Welcome to the shop'), 'the heading is free text');
  assertNotIndexed(state, 'Welcome to the shop');
  assert.ok(!/<body|<div>Welcome/.test(pageOf(state)), pageOf(state));
  await o.actUntil(page, 'Open product B', /Opened product B/, (s) => [{ click: { index: findIndex(s, 'Open product B') } }]);
  assert.equal(await page.textContent('#opened'), 'Opened product B');
  await page.close();
});

test('an open modal dialog makes the rest of the page unreachable, even below the fold', async () => {
  const page = await o.open('dialog-modal.html');
  const state = await o.look(page);
  assert.match(pageOf(state), /^\t*\[\d+\]<[^>]*>Delete$/m);
  assert.match(pageOf(state), /^\t*\[\d+\]<[^>]*>Cancel$/m);
  assert.ok(lineWith(state, 'Delete this file?'));
  assertAbsent(state, 'Top button behind the dialog');
  assertAbsent(state, 'Lower button behind the dialog');
  await page.close();
});
