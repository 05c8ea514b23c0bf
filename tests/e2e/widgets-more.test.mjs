// More real component libraries, of the families widgets.test.mjs does not cover: jQuery UI's
// selectmenu and Select2 (jQuery era), Element Plus (Vue 3), Bits UI (Svelte 5), Angular
// Material, Vaadin's combo box and Material Web's outlined select (web components), Radix UI
// Select, React Aria Components and Downshift (headless React), and Tom Select and Choices.js
// (plain JavaScript). Pages are built at test time from the npm packages (tests/e2e/widgets/,
// bundled by the fixture server).
//
// Each library is driven three ways a model goes about a dropdown — by clicks (open the control,
// click the option, Save), by keys (open the control, type or arrow to the option and press
// Enter, Save) and by select_dropdown (on the control, then Save) — by a mock model that reads
// only the state text and never waits or presses Escape (it tries the last step again only when
// the page has not saved). Each way asserts the
// page's own saved value, that it took no more model calls than the direct path needs (four for
// clicks and keys, three for select_dropdown, the last call being the one that sees the saved
// value and finishes), and that no step was reported done while the page stayed the same.
// A table of every way's calls and outcome is written to tests/e2e/output/widgets-more.md.
// The libraries of widgets.test.mjs (react-select, MUI, Headless UI, Ant Design, Shoelace) are
// driven here the same three ways, so the table holds every dropdown library of the suite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startObserver } from './lib/observe.mjs';
import { OUTPUT_DIR } from './lib/harness.mjs';
import { attempt, explain, byClicks, byKeys, bySelect, typing, arrowsTo } from './lib/widgets.mjs';

/** The model calls each way may take: the direct path and the call that finishes. */
const LIMITS = { clicks: 4, keys: 4, select_dropdown: 3 };

/** Each library's page: its name under tests/e2e/widgets/, what shows once it is ready, its
 * control's label, what its Save writes before the value, and per way the option chosen, the
 * value the page saves for it and (for keys) what a person presses once the list is open. */
const LIBRARIES = [
  {
    library: 'jQuery UI selectmenu', page: 'jquery-ui', ready: '#speed-button', label: 'Delivery speed', field: 'speed',
    clicks: ['Express', 'express'],
    keys: ['Standard', 'standard', typing('Sta')],
    select_dropdown: ['Overnight', 'overnight'],
  },
  {
    library: 'Select2', page: 'select2', ready: '.select2-selection', label: 'Destination country', field: 'country',
    clicks: ['Chile', 'CL'],
    keys: ['Peru', 'PE', typing('Per')],
    select_dropdown: ['Uruguay', 'UY'],
  },
  {
    library: 'Element Plus el-select', page: 'element-plus', ready: '.el-select', label: 'Plan', field: 'plan',
    clicks: ['Premium', 'premium'],
    // Not filterable: its list does not jump to typed text, so a person arrows down to it.
    keys: ['Standard', 'standard', arrowsTo('Standard')],
    select_dropdown: ['Enterprise', 'enterprise'],
  },
  {
    library: 'Bits UI Select', page: 'bits-ui', ready: '#team', label: 'Team', field: 'team',
    clicks: ['Marketing', 'marketing'],
    keys: ['Support', 'support', typing('Sup')],
    select_dropdown: ['Engineering', 'engineering'],
  },
  {
    library: 'Angular Material mat-select', page: 'angular-material', ready: 'mat-select', label: 'Shirt size', field: 'size',
    clicks: ['Medium', 'm'],
    keys: ['Large', 'l', typing('Lar')],
    select_dropdown: ['Extra large', 'xl'],
  },
  {
    library: 'Vaadin combo-box', page: 'vaadin', ready: 'vaadin-combo-box input', label: 'Fruit', field: 'fruit',
    clicks: ['Cherry', 'Cherry'],
    // Typing filters its list without picking an item: Enter takes the one arrowed to.
    keys: ['Mango', 'Mango', typing('Man', 'ArrowDown Enter')],
    select_dropdown: ['Pear', 'Pear'],
  },
  {
    library: 'Radix UI Select', page: 'radix', ready: '#fruit', label: 'Fruit', field: 'fruit',
    clicks: ['Grape', 'grape'],
    keys: ['Orange', 'orange', typing('Ora')],
    select_dropdown: ['Pineapple', 'pineapple'],
  },
  {
    library: 'React Aria Select', page: 'react-aria', ready: '.react-aria-Button', label: 'Home city', field: 'city',
    clicks: ['Rome', 'rome'],
    keys: ['Tokyo', 'tokyo', typing('Tok')],
    select_dropdown: ['Vienna', 'vienna'],
  },
  {
    library: 'Material Web md-outlined-select', page: 'material-web', ready: 'md-outlined-select', label: 'Language', field: 'language',
    clicks: ['French', 'fr'],
    keys: ['Italian', 'it', typing('Ita')],
    select_dropdown: ['Portuguese', 'pt'],
  },
  {
    library: 'Downshift useSelect', page: 'downshift', ready: '[role=combobox]', label: 'Drink', field: 'drink',
    clicks: ['Juice', 'Juice'],
    keys: ['Tea', 'Tea', typing('Tea')],
    select_dropdown: ['Lemonade', 'Lemonade'],
  },
  {
    library: 'Tom Select', page: 'tom-select', ready: '#colour-ts-control', label: 'Paint colour', field: 'colour',
    clicks: ['Olive', 'olive'],
    keys: ['Teal', 'teal', typing('Tea')],
    select_dropdown: ['Amber', 'amber'],
  },
  {
    library: 'Choices.js', page: 'choices', ready: '.choices', label: 'Favourite animal', field: 'animal',
    clicks: ['Dog', 'dog'],
    keys: ['Owl', 'owl', typing('Owl')],
    select_dropdown: ['Seal', 'seal'],
  },
  // The libraries of widgets.test.mjs, here for their keys and the table.
  {
    library: 'react-select', page: 'react-select', ready: '#city', label: 'Destination city', field: 'city',
    saved: (value) => `Saved: city=${value}, seat=-`,
    clicks: ['Porto', 'porto'],
    keys: ['Madrid', 'madrid', typing('Mad')],
    select_dropdown: ['Paris', 'paris'],
  },
  {
    library: 'MUI Select', page: 'mui', ready: '[role=combobox]', label: 'Parcel size', field: 'size',
    saved: (value) => `Saved: size=${value}, country=-`,
    clicks: ['Medium', 'medium'],
    keys: ['Large', 'large', typing('Lar')],
    select_dropdown: ['Small', 'small'],
  },
  {
    library: 'Headless UI Listbox', page: 'headless', ready: 'button', label: 'Assignee', field: 'assignee',
    clicks: ['Carla Dias', 'Carla Dias'],
    keys: ['Bruno Costa', 'Bruno Costa', typing('Bru')],
    select_dropdown: ['Bruno Costa', 'Bruno Costa'],
  },
  {
    library: 'Ant Design Select', page: 'antd', ready: '.ant-select', label: 'Fruit', field: 'fruit',
    clicks: ['Cherry', 'cherry'],
    // Not searchable: its list starts on the first item, and a person arrows down from it.
    keys: ['Banana', 'banana', () => 'ArrowDown Enter'],
    select_dropdown: ['Damson', 'damson'],
  },
  {
    library: 'Shoelace sl-select', page: 'shoelace', ready: 'sl-select', label: 'Colour', field: 'colour',
    clicks: ['Blue', 'blue'],
    keys: ['Green', 'green', typing('Gre')],
    select_dropdown: ['Red', 'red'],
  },
];

let o;
const rows = [];

before(async () => {
  o = await startObserver();
});

after(async () => {
  await o?.close();
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const table = [
    '| library | way | model calls | limit | saved | outcome |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.library} | ${r.way} | ${r.calls} | ${LIMITS[r.way]} | ${r.saved} | ${r.outcome} |`),
  ];
  writeFileSync(path.join(OUTPUT_DIR, 'widgets-more.md'), `${table.join('\n')}\n`);
});

/** The steps of `way` for `lib`, choosing `option`. */
function stepsOf(lib, way, option, keys) {
  if (way === 'clicks') return byClicks(lib.label, option);
  if (way === 'keys') return byKeys(lib.label, keys);
  return bySelect(lib.label, option);
}

for (const lib of LIBRARIES) {
  for (const way of ['clicks', 'keys', 'select_dropdown']) {
    const [option, value, keys] = lib[way];
    test(`${lib.library}: ${option} chosen by ${way.replace('_', ' ')} and saved, in at most ${LIMITS[way]} model calls`, async () => {
      const task = `Choose ${option} as the ${lib.label.toLowerCase()} and save`;
      const run = await attempt(o, lib.page, lib.ready, task, stepsOf(lib, way, option, keys));
      const expected = lib.saved?.(value) ?? `Saved: ${lib.field}=${value}`;
      const problems = [
        run.saved !== expected && `saved "${run.saved}"`,
        run.calls > LIMITS[way] && `${run.calls} calls`,
        run.empty.length > 0 && `step ${run.empty.map((e) => e.step).join(', ')} reported done but changed nothing`,
        run.gaveUp,
      ].filter(Boolean);
      rows.push({ library: lib.library, way, calls: run.calls, saved: run.saved, outcome: problems.length ? `FAIL: ${problems.join('; ')}` : 'pass' });
      const why = explain(run);
      assert.equal(run.saved, expected, why);
      assert.ok(run.calls <= LIMITS[way], `${run.calls} model calls, more than ${LIMITS[way]}\n${why}`);
      assert.deepEqual(run.empty, [], `steps reported done while the page stayed the same\n${why}`);
    });
  }
}
