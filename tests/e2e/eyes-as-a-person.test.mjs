// The eyes list a page as a person sees it, whatever the library that draws it: items that
// share one handler are separate things to click, a control drawn only as an icon is named by
// its picture, things made to be dragged have a number, a read-only field says so, and a combo
// box shows the value it shows a person. Each rule is checked on a small page of our own
// (tests/e2e/fixtures/eyes/) and on pages built from the npm packages sites use — jQuery UI's
// autocomplete, sortable and datepicker, Font Awesome's icon font and its SVG script, and the
// component libraries of tests/e2e/widgets/. Every assertion reads the real state text the
// extension sends to the model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf } from './lib/observe.mjs';
import { findIndex } from './lib/state.mjs';

let o;

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
});

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The element line (indices and indentation left out) whose words are exactly `words`. */
function elementSaying(state, words) {
  return pageOf(state).split('\n').map((l) => l.replace(/^\t*\*?\[\d+\]/, ''))
    .find((l) => l.startsWith('<') && l.endsWith(`>${words}`));
}

/** Asserts an element line says `words`, and returns it. */
function assertElementSaying(state, words) {
  const line = elementSaying(state, words);
  assert.ok(line, `no element says "${words}" in:\n${pageOf(state)}`);
  return line;
}

/** The index of the element whose line matches `pattern`, which must be there. */
function mustFind(state, pattern) {
  const index = findIndex(state, pattern);
  assert.ok(index, `no element matches ${pattern} in:\n${pageOf(state)}`);
  return index;
}

/** Asserts `pattern` matches a line of the page's text. */
function assertLine(state, pattern) {
  assert.match(pageOf(state), new RegExp(`^\\t*\\*?\\[\\d+\\]${pattern.source}$`, 'm'), pageOf(state));
}

// --- 1. Items under one handler ---------------------------------------------------------------

test('items a container listens for are listed one by one; an icon with its label, and a card, stay one control', async () => {
  const page = await o.open('eyes/delegated-items.html');
  const state = await o.look(page);
  assert.equal(assertElementSaying(state, 'Reply'), '<span>Reply');
  assert.equal(assertElementSaying(state, 'Forward'), '<span>Forward');
  for (const city of ['Lisbon', 'Porto', 'Madrid']) assert.equal(assertElementSaying(state, city), `<li>${city}`);
  assert.doesNotMatch(pageOf(state), /\]<ul\b/, 'the list the page listens on is not listed beside its items');
  assert.ok(!/ReplyForward|Lisbon Porto/.test(pageOf(state)), `the containers are not listed:\n${pageOf(state)}`);
  // A toolbar's pictures are items too.
  assertLine(state, /<i icon=bold>/);
  assertLine(state, /<i icon=italic>/);
  // Unlike pieces are one control (a picture and a word, even sharing a class); so are a card's
  // title, text and tags.
  assert.equal(assertElementSaying(state, '✓ Save draft'), '<div>✓ Save draft');
  assert.equal(assertElementSaying(state, 'Archive'), '<div>Archive');
  assertElementSaying(state, 'Harbour walk Two hours along the river. EasyFree');
  await o.actUntil(page, 'Forward the message', /Done: forward/, (s) => [{ click: { index: mustFind(s, />Forward$/) } }]);
  assert.equal(await page.textContent('#done'), 'Done: forward');
  await o.actUntil(page, 'Choose Porto', /Chose Porto/, (s) => [{ click: { index: mustFind(s, />Porto$/) } }]);
  assert.equal(await page.textContent('#done'), 'Chose Porto');
  await o.actUntil(page, 'Make it italic', /Done: italic/, (s) => [{ click: { index: mustFind(s, 'icon=italic') } }]);
  assert.equal(await page.textContent('#done'), 'Done: italic');
  await page.close();
});

test('jQuery (npm): actions under one delegated handler, and each suggestion of jQuery UI autocomplete\'s one-element menu, are listed one by one and chosen by a click', async () => {
  // Loaded while the task runs: jQuery's delegated handlers are seen from the page's start (a
  // page loaded before a task has the listeners it added before it unseen).
  const { page, states } = await o.loadDuringTask('eyes/jquery-autocomplete.html', {
    doneWhen: /Chosen: Porto/,
    act: (s) => {
      if (!/Done: reply/.test(s)) return [{ click: { index: mustFind(s, />Reply$/) } }];
      const porto = findIndex(s, />Porto$/);
      if (porto) return [{ click: { index: porto } }];
      return [{ input: { index: mustFind(s, /label='Destination city'/), text: 'P', clear: true } }];
    },
  });
  assert.equal(assertElementSaying(states[0], 'Reply'), '<span>Reply');
  assert.equal(assertElementSaying(states[0], 'Forward'), '<span>Forward');
  assert.ok(states.some((s) => /^Done: reply$/m.test(pageOf(s))), 'a click on Reply reached the delegated handler');
  const menu = states.find((s) => elementSaying(s, 'Porto'));
  assert.ok(menu, `the suggestions were never listed:\n${states.map(pageOf).join('\n---\n')}`);
  for (const city of ['Porto', 'Paris', 'Prague', 'Portimão']) assert.equal(assertElementSaying(menu, city), `<li>${city}`);
  assert.ok(!/<ul/.test(pageOf(menu)), `the menu itself is not listed:\n${pageOf(menu)}`);
  assert.equal(await page.textContent('#chosen'), 'Chosen: Porto');
  await page.close();
});

// --- 2. Controls drawn as icons ------------------------------------------------------------

test('controls drawn only as icons are named by their pictures: SVG symbols, icon classes, image files', async () => {
  const page = await o.open('eyes/icons.html');
  const state = await o.look(page);
  assertLine(state, /<button icon=trash>/); // <svg><use href="#icon-trash">
  assertLine(state, /<span icon=star>/); // <svg><use xlink:href="#icon-star">, and <i class="fa-solid fa-star">
  assertLine(state, /<span>Reply to Ana/); // an svg's <title> is words
  assertLine(state, /<span icon=trash>/); // fa fa-trash-o fa-lg
  assertLine(state, /<i icon=reply>/); // icon-reply
  assertLine(state, /<span icon=heart>/); // glyphicon glyphicon-heart
  assertLine(state, /<button icon='hand thumbs up'>/); // bi bi-hand-thumbs-up-fill
  assert.equal(pageOf(state).split('\n').filter((l) => l.endsWith("<button icon='trash can'>")).length, 2,
    `an <img> and a background picture, by their file's name:\n${pageOf(state)}`);
  assertLine(state, /<span>more_vert/); // a ligature font's words are its text
  assertLine(state, /<button>Save/); // words name it: the icon is not said
  await o.actUntil(page, 'Like the message with the heart', /Done: glyphicon/, (s) => [{ click: { index: mustFind(s, 'icon=heart') } }]);
  assert.equal(await page.textContent('#done'), 'Done: glyphicon');
  await page.close();
});

for (const [name, drawn] of [['fontawesome', 'its icon font'], ['fontawesome-svg', 'the SVGs its script draws']]) {
  test(`Font Awesome (npm), ${drawn}: each icon-only control is named by its icon`, async () => {
    const page = await o.open(`eyes/${name}.html`);
    if (name === 'fontawesome-svg') await page.locator('svg[data-icon=reply]').waitFor();
    const state = await o.look(page);
    assertLine(state, /<button icon=reply>/);
    assertLine(state, /<button icon=star>/);
    assertLine(state, /<span icon='thumbs up'>/);
    assertLine(state, /<a icon='trash can' href=#trash>/);
    assertLine(state, /<(span|svg role=img) icon='ellipsis vertical'>/);
    await o.actUntil(page, 'Like the message', /Done: like/, (s) => [{ click: { index: mustFind(s, "icon='thumbs up'") } }]);
    assert.equal(await page.textContent('#done'), 'Done: like');
    await page.close();
  });
}

// --- 3. Things made to be dragged ----------------------------------------------------------

test('things a page makes draggable are listed and marked so, and drag_and_drop moves them', async () => {
  const page = await o.open('eyes/draggables.html');
  const state = await o.look(page);
  assertLine(state, /<div draggable>Draft the budget/); // draggable=true
  assertLine(state, /<div draggable>Send invitations/); // cursor: move
  for (const slide of ['First slide', 'Second slide', 'Third slide']) assertLine(state, new RegExp(`<li draggable>${slide}`)); // the list's grab cursor
  // Those and nothing else: not the list whose cursor its items take, not the headings.
  assert.equal((pageOf(state).match(/ draggable>/g) ?? []).length, 6, pageOf(state));
  await o.actUntil(page, 'Start drafting the budget', /Moved Draft the budget to doing/, (s) => [{
    drag_and_drop: { index: mustFind(s, />Draft the budget$/), target: mustFind(s, />Send invitations$/), x: null, y: null },
  }]);
  assert.equal(await page.textContent('#moved'), 'Moved Draft the budget to doing');
  await page.close();
});

test('jQuery UI sortable (npm): items with no handler of their own are listed as draggable, and reordered by dragging', async () => {
  const page = await o.open('eyes/jquery-sortable.html');
  await page.locator('#order').filter({ hasText: 'Order:' }).waitFor();
  const state = await o.look(page);
  for (const task of ['Write report', 'Call the bank', 'Buy milk', 'Water plants']) assertLine(state, new RegExp(`<li draggable>${task}`));
  await o.actUntil(page, 'Put buying milk first', /Order: Buy milk, Write report/, (s) => [{
    drag_and_drop: { index: mustFind(s, />Buy milk$/), target: mustFind(s, />Write report$/), x: null, y: null },
  }]);
  assert.equal(await page.textContent('#order'), 'Order: Buy milk, Write report, Call the bank, Water plants');
  await page.close();
});

// --- 4. Read-only fields -------------------------------------------------------------------

test('a read-only field is listed and marked readonly; clicking it opens its calendar', async () => {
  const page = await o.open('eyes/readonly-fields.html');
  const state = await o.look(page);
  assertLine(state, /<input name=arrival label='Arrival date' placeholder='Choose a date' readonly>/);
  assertLine(state, /<input name=reference label='Booking reference' value=BK-2291 readonly>/);
  assertLine(state, /<input name=notes label=Notes>/);
  await o.actUntil(page, 'Arrive on the 13th', /value=2026-07-13/, (s) => {
    const day = findIndex(s, />13$/);
    return [{ click: { index: day ?? mustFind(s, "label='Arrival date'") } }];
  });
  assert.equal(await page.inputValue('#arrival'), '2026-07-13');
  await page.close();
});

test('jQuery UI datepicker (npm) on a read-only field: listed as readonly, a date picked in its calendar', async () => {
  const page = await o.open('eyes/jquery-datepicker.html');
  const { states } = await o.actUntil(page, 'Leave on 24 July 2026', /Departure: 2026-07-24/, (s) => {
    const day = findIndex(s, />24$/);
    return [{ click: { index: day ?? mustFind(s, "label='Departure date'") } }];
  });
  assertLine(states[0], /<input name=departure label='Departure date' readonly>/);
  assert.equal(await page.textContent('#chosen'), 'Departure: 2026-07-24');
  assertLine(states.at(-1), /<input name=departure label='Departure date' value=2026-07-24 readonly>/);
  await page.close();
});

// --- 5. What a control shows ----------------------------------------------------------------

test('a combo box whose value is drawn beside its input shows that value; a placeholder is not a value', async () => {
  const page = await o.open('eyes/shown-values.html');
  const state = await o.look(page);
  assertLine(state, /<input role=combobox label='Destination city' value=Porto aria-expanded=false>/); // a sibling of its wrapper
  assertLine(state, /<input role=combobox label=Seat value=Window>/); // beside the input's own wrapper
  assertLine(state, /<input role=combobox label=Meal>/); // a placeholder drawn as text
  assertLine(state, /<input role=combobox label=Search>/); // a keyboard hint and a clear sign are no value
  assertLine(state, /<input role=combobox label=Bags value='2 bags'>/); // its own value first
  await page.close();
});

/** Opens widget page `name`, waits for `ready`, lets `choose(page)` pick an option with real
 * clicks, and returns the state text the model then reads. */
async function afterChoosing(name, ready, choose) {
  const page = await o.open(`widgets/${name}.html`);
  await page.locator(ready).first().waitFor();
  await choose(page);
  const state = await o.look(page);
  await page.close();
  return state;
}

test('component libraries: once an option is chosen by clicks, its control shows it, wherever the library draws it', async () => {
  // react-select: the chosen option is a div beside the combobox input, whose value is empty.
  let state = await afterChoosing('react-select', '#city', async (page) => {
    await page.click('#city');
    await page.getByText('Porto', { exact: true }).click();
  });
  assertLine(state, /<input role=combobox label='Destination city' value=Porto aria-expanded=false aria-haspopup=true>/);
  assertLine(state, /<input role=combobox label=Seat aria-expanded=false aria-haspopup=true>/);

  // Ant Design: a span beside the read-only search input.
  state = await afterChoosing('antd', '.ant-select', async (page) => {
    await page.click('.ant-select');
    await page.locator('.ant-select-item-option').filter({ hasText: 'Banana' }).click();
  });
  assertLine(state, /<input role=combobox label=Fruit value=Banana .*readonly>/);

  // MUI: the Select's words are its value; the Autocomplete's input holds its own.
  state = await afterChoosing('mui', '[role=combobox]', async (page) => {
    await page.locator('[role=combobox]').first().click();
    await page.getByRole('option', { name: 'Medium' }).click();
    await page.getByRole('option').first().waitFor({ state: 'detached' });
    await page.getByLabel('Country').click();
    await page.getByRole('option', { name: 'Spain' }).click();
  });
  assertLine(state, /<div role=combobox label='Parcel size'.*>Medium/);
  assertLine(state, /<input role=combobox label=Country value=Spain.*>/);

  // Headless UI: the listbox button's words.
  state = await afterChoosing('headless', 'button', async (page) => {
    await page.locator('button').first().click();
    await page.getByRole('option', { name: 'Carla Dias' }).click();
  });
  assertLine(state, /<button label=Assignee .*>Carla Dias/);

  // Shoelace: the read-only display input inside its shadow root.
  state = await afterChoosing('shoelace', 'sl-select', async (page) => {
    await page.locator('sl-select').click();
    await page.locator('sl-option').filter({ hasText: 'Blue' }).click();
  });
  assertLine(state, new RegExp(`<input role=combobox label=Colour .*value=${escape('Blue')} .*readonly>`));
});
