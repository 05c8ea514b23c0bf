// Real component libraries, not imitations: pages built at test time from the npm packages
// (tests/e2e/widgets/*.jsx, bundled by the fixture server with esbuild) — react-select, MUI
// Select and Autocomplete, Headless UI Listbox, react-datepicker, Ant Design Select and
// Shoelace's sl-select (web components, options slotted into shadow DOM). Each task runs
// through the mock LLM, which reads the state text as a model would: it finds the control by
// its label, the option by its text and Save by its name, both ways a model goes about it —
// clicking the control then the option, and select_dropdown — and the page's own saved value
// is checked.
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

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A control's line by its label: the name a label gives it, or its own words. */
const labelled = (label) => new RegExp(`label='?${escape(label)}'?[ >]`);
/** An element whose line ends with `text` (its words). */
const saying = (text) => new RegExp(`>${escape(text)}$`);

function mustFind(state, pattern, what) {
  const index = findIndex(state, pattern);
  assert.ok(index, `no ${what} (${pattern}) in:\n${pageOf(state)}`);
  return index;
}

const done = (text) => answer('Finish', [{ done: { text, success: true } }]);

/** Runs a task whose model plays `steps` (each gets the state text) until the page shows
 * `saved`, then finishes; returns the states it saw. */
async function play(page, task, steps, saved) {
  let i = 0;
  o.setPolicy((state) => {
    if (state.includes(saved)) return done('Saved.');
    const step = steps[Math.min(i++, steps.length - 1)];
    return step(state);
  });
  try {
    const { states, final } = await o.run(page, task);
    assert.match(final, /Saved\./, `the task ended with: ${final}\n${states.map(pageOf).join('\n---\n')}`);
    return states;
  } finally {
    o.setPolicy(null);
  }
}

/** The model clicks the control (found by its label), then the option (by its text), then Save. */
const byClicks = (label, option, save = 'Save') => [
  (s) => answer(`Open ${label}`, [{ click: { index: mustFind(s, labelled(label), `control labelled ${label}`) } }]),
  (s) => answer(`Choose ${option}`, [{ click: { index: mustFind(s, saying(option), `option ${option}`) } }]),
  (s) => answer('Save', [{ click: { index: mustFind(s, saying(save), 'Save') } }]),
];

/** The model chooses with select_dropdown on the control, then saves. */
const bySelect = (label, option, save = 'Save') => [
  (s) => answer(`Choose ${option}`, [{ select_dropdown: { index: mustFind(s, labelled(label), `control labelled ${label}`), text: option } }]),
  (s) => answer('Save', [{ click: { index: mustFind(s, saying(save), 'Save') } }]),
];

async function openWidget(name, ready) {
  const page = await o.open(`widgets/${name}.html`);
  await page.locator(ready).first().waitFor();
  return page;
}

const savedText = (page) => page.locator('#saved').innerText();

/** Opens widget page `name` afresh, plays `steps` for `task` until it saves, and asserts the
 * page's own saved value; returns the states the model saw. */
async function chooseAndSave(name, ready, task, steps, expected) {
  const page = await openWidget(name, ready);
  try {
    const states = await play(page, task, steps, 'Saved:');
    assert.equal(await savedText(page), expected);
    // The direct path and no more: one call per step, and one to finish (no waiting for a list
    // to close, no Escape, no second try).
    assert.ok(states.length <= steps.length + 1, `${states.length} model calls for ${steps.length} steps:\n${states.map(pageOf).join('\n---\n')}`);
    return states;
  } finally {
    await page.close();
  }
}

test('react-select: two unlabelled-looking comboboxes are told apart by their labels; chosen by clicks and by select_dropdown', async () => {
  const states = await chooseAndSave('react-select', '#city', 'Book a trip to Porto with a window seat', [
    ...byClicks('Destination city', 'Porto').slice(0, 2),
    ...bySelect('Seat', 'Window'),
  ], 'Saved: city=porto, seat=window');
  assert.match(pageOf(states[0]), /<input role=combobox label='Destination city'/);
  assert.match(pageOf(states[0]), /<input role=combobox label=Seat/);
  await chooseAndSave('react-select', '#city', 'Book a trip to Madrid', bySelect('Destination city', 'Madrid'), 'Saved: city=madrid, seat=-');
});

test('MUI Select and Autocomplete: chosen by clicks, and by select_dropdown; the closing menu does not hide Save', async () => {
  await chooseAndSave('mui', '[role=combobox]', 'Ship a medium parcel to Spain', [
    ...byClicks('Parcel size', 'Medium').slice(0, 2),
    ...byClicks('Country', 'Spain'),
  ], 'Saved: size=medium, country=Spain');
  await chooseAndSave('mui', '[role=combobox]', 'Ship a large parcel to Italy', [
    (s) => answer('Choose the size', [{ select_dropdown: { index: mustFind(s, labelled('Parcel size'), 'size'), text: 'Large' } }]),
    ...bySelect('Country', 'Italy'),
  ], 'Saved: size=large, country=Italy');
});

test('Headless UI Listbox: chosen by clicks and by select_dropdown', async () => {
  await chooseAndSave('headless', 'button', 'Assign it to Carla Dias', byClicks('Assignee', 'Carla Dias'), 'Saved: assignee=Carla Dias');
  await chooseAndSave('headless', 'button', 'Assign it to Bruno Costa', bySelect('Assignee', 'Bruno Costa'), 'Saved: assignee=Bruno Costa');
});

test('Ant Design Select: select_dropdown picks from the list a person sees, not the hidden accessibility list; clicks work too', async () => {
  await chooseAndSave('antd', '.ant-select', 'Order bananas', bySelect('Fruit', 'Banana'), 'Saved: fruit=banana');
  await chooseAndSave('antd', '.ant-select', 'Order cherries', byClicks('Fruit', 'Cherry'), 'Saved: fruit=cherry');
});

test('Shoelace sl-select: options slotted into its shadow DOM are found by select_dropdown and by clicks', async () => {
  await chooseAndSave('shoelace', 'sl-select', 'Pick green', bySelect('Colour', 'Green'), 'Saved: colour=green');
  await chooseAndSave('shoelace', 'sl-select', 'Pick blue', byClicks('Colour', 'Blue'), 'Saved: colour=blue');
});

test('react-datepicker: a date picked in its calendar, and a date typed in its field', async () => {
  await chooseAndSave('datepicker', '#departure', 'Leave on 24 December 2026', [
    (s) => answer('Open the calendar', [{ click: { index: mustFind(s, labelled('Departure date'), 'the date field') } }]),
    (s) => answer('Pick the 24th', [{ click: { index: mustFind(s, /December 24th, 2026/, 'the 24th') } }]),
    (s) => answer('Save', [{ click: { index: mustFind(s, saying('Save'), 'Save') } }]),
  ], 'Saved: departure=2026-12-24');
  await chooseAndSave('datepicker', '#departure', 'Leave on 2 January 2027', [
    (s) => answer('Type the date', [
      { input: { index: mustFind(s, labelled('Departure date'), 'the date field'), text: '2027-01-02', clear: true } },
      { send_keys: { keys: 'Escape' } },
    ]),
    (s) => answer('Save', [{ click: { index: mustFind(s, saying('Save'), 'Save') } }]),
  ], 'Saved: departure=2027-01-02');
});
