// Every action, executed for real: each test gives the mock LLM a policy that reads the state
// text the extension sends (elements found by their text), runs a task through the side panel
// in real Chromium, and checks the effect on the page — not merely that an action was sent.
// DEBUG_ACTIONS=1 prints each state text the model received, to see why a test failed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf, textOf } from './lib/observe.mjs';
import { answer } from './lib/mock-llm.mjs';
import { availableActions, findIndex, field, offeredActions } from './lib/state.mjs';

let o;

before(async () => {
  o = await startObserver({ evaluateDomains: ['localhost'], extractionModel: 'mock-extractor', viewportExpansion: 0 });
  // No internet here: the search engine's results page is answered locally, from the query
  // the browser really asked for.
  await o.h.context.route('https://duckduckgo.com/**', (route) => {
    const q = new URL(route.request().url()).searchParams.get('q') ?? '';
    route.fulfill({ contentType: 'text/html', body: `<!doctype html><title>${q} at DuckDuckGo</title><h1>Results for ${q}</h1>` });
  });
});

after(async () => {
  await o?.close();
});

const done = (text = 'Finished.', success = true) => answer('Finish', [{ done: { text, success } }]);

/** A model that plays `steps` in order — each gets the state text and request body and returns
 * the answer — then finishes. Extraction requests (the extract action's own LLM calls) go to
 * `extractor`. */
function script(steps, extractor = null) {
  let i = 0;
  return (state, body) => {
    if (body.response_format?.json_schema?.name === 'extraction') return extractor(state, body);
    const step = steps[i++];
    return step ? step(state, body) : done();
  };
}

/** Runs `task` on `page` with the scripted model; returns this task's agent requests (bodies),
 * their state texts, and the final answer. */
async function runScript(page, task, steps, extractor) {
  const before = o.llm.requests.length;
  o.setPolicy(script(steps, extractor));
  try {
    const { final } = await o.run(page, task);
    if (process.env.DEBUG_ACTIONS) {
      for (const b of o.llm.requests.slice(before).map((r) => r.body)) console.log("STATE:", textOf(b).replace(/<task>[\s\S]*<\/history>/, "").slice(0, 1500));
    }
    const bodies = o.llm.requests.slice(before).map((r) => r.body);
    const agent = bodies.filter((b) => b.response_format?.json_schema?.name !== 'extraction');
    return { final, bodies, agent, states: agent.map(textOf) };
  } finally {
    o.setPolicy(null);
  }
}

function mustFind(state, pattern) {
  const index = findIndex(state, pattern);
  assert.ok(index, `no element matching ${pattern} in:\n${pageOf(state)}`);
  return index;
}

/** The last step's results block of a state text. */
function lastResults(state) {
  return /<last_step_results>\n([\s\S]*?)<\/last_step_results>/.exec(state)?.[1] ?? '';
}

test('search opens the default engine with the query and the results page is observed', async () => {
  const page = await o.open('actions/history-a.html');
  const { states } = await runScript(page, 'Search the web for rust wasm', [
    () => answer('Search', [{ search: { query: 'rust wasm', engine: null } }]),
  ]);
  assert.match(lastResults(states[1]), /search: Searched duckduckgo for "rust wasm"/);
  assert.match(field(states[1], 'URL'), /^https:\/\/duckduckgo\.com\/\?q=rust%20wasm$/);
  assert.match(pageOf(states[1]), /Results for rust wasm/);
  assert.equal(await page.title(), 'rust wasm at DuckDuckGo');
});

test('navigate loads a URL in the tab, and with new_tab opens a second tab the task moves to', async () => {
  const page = await o.open('actions/history-a.html');
  const target = `${o.h.fixtures.url}/actions/history-b.html`;
  const { states } = await runScript(page, 'Open page B, then the pricing page in a new tab', [
    () => answer('Open B', [{ navigate: { url: target, new_tab: null } }]),
    () => answer('Open pricing in a new tab', [{ navigate: { url: `${o.h.fixtures.url}/actions/pricing.html`, new_tab: true } }]),
  ]);
  assert.equal(field(states[1], 'Title'), 'Page B');
  assert.equal(page.url(), target, 'the task tab itself navigated');
  assert.equal(field(states[2], 'Title'), 'Pricing');
  assert.match(states[2], /Tabs:\n {2}tab \d+: Page B — http[^\n]+\n {2}tab \d+ \(current\): Pricing/);
  assert.match(lastResults(states[2]), /Opened tab \d+ at http[^ ]+pricing\.html; it is now the current tab/);
});

test('go_back and go_forward move through the tab history, and are offered only when possible', async () => {
  const page = await o.open('actions/history-a.html');
  const { states, agent } = await runScript(page, 'Visit page B, go back, then forward again', [
    (s) => answer('Open B', [{ click: { index: mustFind(s, 'Go to page B'), x: null, y: null } }]),
    () => answer('Back', [{ go_back: {} }]),
    () => answer('Forward', [{ go_forward: {} }]),
  ]);
  assert.ok(!availableActions(agent[0]).includes('go_forward'), 'nothing to go forward to yet');
  assert.ok(availableActions(agent[1]).includes('go_back'), 'after a navigation the page can go back');
  assert.ok(!availableActions(agent[1]).includes('go_forward'));
  assert.equal(field(states[2], 'Title'), 'Page A');
  assert.match(lastResults(states[2]), /Went back to http[^ ]+history-a\.html/);
  assert.ok(availableActions(agent[2]).includes('go_forward'), 'after going back the page can go forward');
  assert.equal(field(states[3], 'Title'), 'Page B');
  assert.equal(await page.title(), 'Page B');
});

test('wait gives a slow page time, and the next step sees what appeared', async () => {
  const page = await o.open('actions/slow-ready.html');
  const { states } = await runScript(page, 'Wait for the export', [
    (s) => {
      assert.match(s, /Preparing your export/);
      return answer('Wait for it', [{ wait: { seconds: 2 } }]);
    },
  ]);
  assert.match(lastResults(states[1]), /wait: Waited 2 s/);
  assert.match(pageOf(states[1]), /Export ready/);
  assert.ok(findIndex(states[1], 'Download export'), 'the link that appeared is listed');
});

test('click by x and y clicks that point of the viewport with a real mouse event', async () => {
  const page = await o.open('actions/canvas.html');
  const { states } = await runScript(page, 'Drop a pin where the page says', [
    (s) => {
      const [, x, y] = /x=(\d+) y=(\d+)/.exec(pageOf(s));
      return answer('Click the map', [{ click: { index: null, x: Number(x), y: Number(y) } }]);
    },
  ]);
  assert.match(lastResults(states[1]), /Clicked at \(150, 160\)/);
  assert.equal(await page.locator('#pin').innerText(), 'Pin at 150,160');
});

test('a click on a link in full view leaves the page where it is; a link cut by the edge of the window is brought to the middle first', async () => {
  const page = await o.open('sticky-header.html');
  // Scrolled so that a row is cut by the bottom of the window.
  const cut = await page.evaluate(() => {
    const cutRow = () => [...document.querySelectorAll('li a')]
      .find((a) => { const r = a.getBoundingClientRect(); return r.top < innerHeight - 4 && r.bottom > innerHeight + 4; });
    for (let y = 400; y < 440 && !cutRow(); y += 2) scrollTo(0, y);
    return cutRow()?.textContent ?? null;
  });
  assert.ok(cut, 'a row is cut by the bottom of the window');
  const start = await page.evaluate(() => scrollY);
  const whereRow = (text) => page.evaluate((text) => {
    const a = [...document.querySelectorAll('li a')].find((el) => el.textContent === text);
    const r = a.getBoundingClientRect();
    return { scrollY, middle: r.top + r.height / 2, window: innerHeight };
  }, text);
  const seen = [];
  await runScript(page, 'Open row 15, then the row at the bottom', [
    (s) => answer('Open row 15', [{ click: { index: mustFind(s, />Row link 15$/), x: null, y: null } }]),
    async (s) => {
      seen.push(await whereRow('Row link 15'));
      return answer('Open the cut row', [{ click: { index: mustFind(s, new RegExp(`>${cut}$`)), x: null, y: null } }]);
    },
    async () => {
      seen.push(await whereRow(cut));
      return done();
    },
  ]);
  assert.equal(await page.evaluate(() => location.hash), `#row${cut.split(' ').at(-1)}`, 'both links were clicked');
  assert.equal(seen[0].scrollY, start, 'the page did not move for a link in full view');
  assert.ok(Math.abs(seen[1].middle - seen[1].window / 2) <= 2, `the cut link was scrolled to the middle: ${JSON.stringify(seen[1])}`);
  await page.close();
});

test('click falls back to a trusted click on a page that ignores script clicks', async () => {
  const page = await o.open('actions/trusted-only.html');
  const { states } = await runScript(page, 'Confirm you are here', [
    (s) => answer('Confirm', [{ click: { index: mustFind(s, 'Confirm I am here'), x: null, y: null } }]),
  ]);
  assert.equal(await page.locator('#status').innerText(), 'Confirmed by a real click');
  assert.match(lastResults(states[1]), /the page ignored a script click, so it was repeated as a real mouse click/);
  assert.match(pageOf(states[1]), /Confirmed by a real click/);
  // The debugger was attached for the trusted click and let go when the task ended: the
  // extension can attach to the tab again (a second attach while still attached fails).
  const reattach = await o.panel.evaluate(async () => {
    const tab = (await chrome.tabs.query({})).find((t) => t.url?.endsWith('/actions/trusted-only.html'));
    try {
      await chrome.debugger.attach({ tabId: tab.id }, '1.3');
    } catch (error) {
      return String(error?.message ?? error);
    }
    let second = 'attached twice';
    try {
      await chrome.debugger.attach({ tabId: tab.id }, '1.3');
    } catch (error) {
      second = String(error?.message ?? error);
    }
    await chrome.debugger.detach({ tabId: tab.id });
    return `released; ${second}`;
  });
  assert.match(reattach, /^released; .*already attached/, 'no debugger stays attached after the task');
});

test('a page that answers a script click with a change fools the first click; the same element clicked again gets a real click', async () => {
  const page = await o.open('actions/trusted-or-scold.html');
  const { states } = await runScript(page, 'Send the form', [
    (s) => answer('Send', [{ click: { index: mustFind(s, />Send the form$/), x: null, y: null } }]),
    (s) => {
      assert.match(pageOf(s), /Please use a real click/, 'the page answered the first click');
      return answer('Send again', [{ click: { index: mustFind(s, />Send the form$/), x: null, y: null } }]);
    },
  ]);
  assert.equal(await page.locator('#status').innerText(), 'Sent by a real click');
  assert.doesNotMatch(lastResults(states[1]), /real mouse click/);
  assert.match(lastResults(states[2]), /with a real mouse click, as it was clicked in a recent step too/);
  assert.match(pageOf(states[2]), /Sent by a real click/);
});

/** Attaches files in the side panel as a person would pick them, runs `steps`, then starts a
 * new conversation (which takes the files off). */
async function withFiles(files, run) {
  await o.panel.setInputFiles('#attach-input', files);
  await o.panel.locator('#attachments .chip').nth(files.length - 1).waitFor();
  try {
    return await run();
  } finally {
    await o.panel.locator('#new-conversation').click();
    assert.equal(await o.panel.locator('#attachments .chip').count(), 0, 'a new conversation has no files');
  }
}

const CV = { name: 'cv.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 a short CV\n') };
const PHOTO = { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) };

test('upload_file puts an attached file into a file field and drops another on a drop area; the model sees names only', async () => {
  const page = await o.open('actions/upload.html');
  const { states, agent } = await withFiles([CV, PHOTO], () => runScript(page, 'Upload my CV and my photo', [
    (s, body) => {
      assert.ok(offeredActions(body).includes('upload_file'));
      return answer('Upload both', [
        { upload_file: { index: mustFind(s, 'name=resume'), file: 'cv.pdf' } },
        { upload_file: { index: mustFind(s, 'Drop a photo here'), file: 'photo.png' } },
      ]);
    },
  ]));
  assert.match(states[0], /<attached_files>\n- cv\.pdf \(application\/pdf, 20 B\)\n- photo\.png \(image\/png, 7 B\)\n<\/attached_files>/);
  assert.ok(!states[0].includes('a short CV'), 'the model never reads a file');
  assert.equal(await page.locator('#resume-state').innerText(), 'Résumé: cv.pdf, 20 bytes, starts "%PDF-1.4 a s"');
  assert.equal(await page.locator('#photo-state').innerText(), 'Photo: photo.png, image/png, 7 bytes');
  assert.match(lastResults(states[1]), /Put cv\.pdf into the file field of \[\d+\] <input>/);
  assert.match(lastResults(states[1]), /Dropped photo\.png on \[\d+\] <div>; the page took it/);
  // A task without files is not offered the action.
  const { agent: without } = await runScript(page, 'Look', [() => answer('Done', [{ done: { text: 'ok', success: true } }])]);
  assert.ok(!offeredActions(without[0]).includes('upload_file'));
  assert.ok(offeredActions(agent[0]).includes('upload_file'));
});

test('upload_file gives a react-dropzone area (from npm) the file through its hidden field', async () => {
  const page = await o.open('widgets/dropzone.html');
  await page.locator('.dropzone').waitFor();
  await withFiles([CV], () => runScript(page, 'Upload my CV', [
    (s) => answer('Upload the CV', [{ upload_file: { index: mustFind(s, 'Drag your CV here'), file: 'cv.pdf' } }]),
  ]));
  assert.equal(await page.locator('#taken').innerText(), 'Uploaded: cv.pdf (20 bytes)');
});

test('drag_and_drop reorders a SortableJS list (from npm) by dragging an item onto another', async () => {
  const page = await o.open('widgets/sortable.html');
  await page.locator('#order').filter({ hasText: 'Order:' }).waitFor();
  const { states } = await runScript(page, 'Put buying milk first', [
    (s) => answer('Move it up', [{ drag_and_drop: { index: mustFind(s, />Buy milk$/), target: mustFind(s, />Write report$/), x: null, y: null } }]),
  ]);
  assert.equal(await page.locator('#order').innerText(), 'Order: Buy milk, Write report, Call the bank, Water plants');
  assert.match(lastResults(states[1]), /Dragged \[\d+\] <li> onto \[\d+\] <li>/);
  // The items are drag sources to the model, as a person sees them.
  assert.match(states[0], /\[\d+\]<li draggable>Buy milk$/m);
});

test('drag_and_drop reorders a dnd-kit list (from npm), which follows pointer events alone', async () => {
  const page = await o.open('widgets/dndkit.html');
  await page.locator('#order').waitFor();
  await runScript(page, 'Play All Blues last but one', [
    (s) => answer('Move it', [{ drag_and_drop: { index: mustFind(s, />So What$/), target: mustFind(s, />All Blues$/), x: null, y: null } }]),
  ]);
  assert.equal(await page.locator('#order').innerText(), 'Order: Blue in Green, Freddie Freeloader, All Blues, So What');
});

test('drag_and_drop to a point moves a slider made of divs there', async () => {
  const page = await o.open('actions/slider.html');
  // Where 75% of the track is, as a model reads it off a screenshot.
  const [x, y] = await page.evaluate(() => {
    const r = document.getElementById('track').getBoundingClientRect();
    return [r.left + r.width * 0.75, r.top + r.height / 2];
  });
  await runScript(page, 'Set the volume to three quarters', [
    (s) => answer('Drag the knob', [{ drag_and_drop: { index: mustFind(s, "aria-label=Volume"), target: null, x, y } }]),
  ]);
  assert.equal(await page.locator('#volume').innerText(), 'Volume: 75');
});

test('input and select_dropdown drive a real React-controlled form, and dropdown_options lists a select', async () => {
  const page = await o.open('actions/react-form.html');
  const { states, agent } = await runScript(page, 'Order a large for Ada Lovelace', [
    (s) => answer('Type the name, list the sizes', [
      { input: { index: mustFind(s, 'Full name'), text: 'Ada Lovelace', clear: true } },
      { dropdown_options: { index: mustFind(s, /^select/) } },
    ]),
    (s) => {
      const listed = lastResults(s);
      const large = /"(Large[^"]*)"/.exec(listed)?.[1];
      assert.ok(large, `the options are listed: ${listed}`);
      return answer('Choose large', [{ select_dropdown: { index: mustFind(s, /^select/), text: large } }]);
    },
    (s) => answer('Order', [{ click: { index: mustFind(s, 'Place order'), x: null, y: null } }]),
  ]);
  assert.ok(availableActions(agent[0]).includes('select_dropdown'), 'a page with a select offers dropdown actions');
  assert.match(lastResults(states[1]), /0: "Small"\n1: "Medium" \(selected\)\n2: "Large \(\+2 €\)"/);
  assert.match(pageOf(states[2]), /Preview: Ada Lovelace, large/, 'React saw the typed name and the chosen size');
  await page.getByRole('heading', { name: 'Ordered a large for Ada Lovelace' }).waitFor({ timeout: 5_000 });
  assert.ok(!availableActions(agent[3]).includes('select_dropdown'), 'no dropdown on the confirmation page');
});

test('send_keys presses a real Enter that submits a form without a button, and Escape', async () => {
  const page = await o.open('actions/search-box.html');
  const { states } = await runScript(page, 'Search this site for teapots', [
    (s) => answer('Type and press Escape', [
      { input: { index: mustFind(s, 'Search this site'), text: 'teapots', clear: true } },
      { send_keys: { keys: 'Escape' } },
    ]),
    (s) => {
      assert.match(pageOf(s), /Escape pressed/);
      return answer('Submit', [
        { click: { index: mustFind(s, 'Search this site'), x: null, y: null } },
        { send_keys: { keys: 'Enter' } },
      ]);
    },
  ]);
  assert.match(lastResults(states[2]), /send_keys: Pressed Enter; the page navigated to http[^ ]+\/results\?q=teapots/);
  assert.equal(await page.title(), 'Results for teapots');
  assert.ok(o.h.fixtures.log.includes('GET /results'), 'the form was submitted to the server');
});

test('scroll moves the page and a scrolling container, and is offered only when something scrolls', async () => {
  const page = await o.open('actions/long-page.html');
  const { states, agent } = await runScript(page, 'Read the end of the article and the last message', [
    (s) => answer('Scroll the inbox', [{ scroll: { down: true, pages: 10, index: mustFind(s, />Message 1$/) } }]),
    () => answer('Scroll the page', [{ scroll: { down: true, pages: 10, index: null } }]),
  ]);
  assert.ok(availableActions(agent[0]).includes('scroll'));
  assert.match(lastResults(states[1]), /Scrolled the container of \[\d+\] <a> down by \d+ pixels; it is now at the bottom/);
  assert.ok(findIndex(states[1], 'Message 30'), 'the last message is listed after scrolling the inbox');
  assert.match(lastResults(states[2]), /Scrolled the page down by \d+ pixels; it is now at the bottom/);
  assert.match(pageOf(states[2]), /End of article marker/);
  assert.ok(await page.evaluate(() => window.scrollY) > 5000);
  const short = await o.open('actions/history-a.html');
  const { agent: plain } = await runScript(short, 'Look', []);
  assert.ok(!availableActions(plain[0]).includes('scroll'), 'nothing scrolls on a short page');
});

test('find_text scrolls a phrase into view and search_page finds text anywhere without the LLM', async () => {
  const page = await o.open('actions/long-page.html');
  const { states } = await runScript(page, 'Find the order number and track the parcel', [
    () => answer('Search', [{ search_page: { pattern: 'Order #\\d+', regex: true } }]),
    () => answer('Find it', [{ find_text: { text: 'your order NUMBER is' } }]),
    (s) => answer('Track', [{ click: { index: mustFind(s, 'Track parcel'), x: null, y: null } }]),
  ]);
  const found = lastResults(states[1]);
  assert.match(found, /Found 1 match\(es\) for "Order #\\\\d\+" on the page/);
  assert.match(found, /<page_content>\n1\. …[^\n]*\[Order #48213\], shipped Tuesday/);
  assert.doesNotMatch(pageOf(states[1]), /Track parcel/, 'before find_text the section is out of view');
  assert.match(lastResults(states[2]), /Found "your order NUMBER is" and scrolled it into view/);
  assert.match(pageOf(states[2]), /Track parcel/);
  const { states: bad } = await runScript(page, 'Search badly', [
    () => answer('Search', [{ search_page: { pattern: '([', regex: true } }]),
  ]);
  assert.match(lastResults(bad[1]), /search_page: The pattern is not valid: invalid regular expression/);
});

test('a link that opens a new tab moves the task there; switch_tab, open_tab and close_tab manage the tabs', async () => {
  const page = await o.open('actions/new-tab-link.html');
  const reports = async () => (await Promise.all(o.h.context.pages().map((p) => p.title()))).filter((t) => t === 'Page B').length;
  const reportsBefore = await reports();
  const { states, agent } = await runScript(page, 'Open the report, go back to the links, open pricing, close the report', [
    (s) => {
      assert.doesNotMatch(s, /Tabs:/, 'one tab: no tab list');
      return answer('Open the report', [{ click: { index: mustFind(s, 'Open the report'), x: null, y: null } }]);
    },
    (s) => {
      const links = /tab (\d+): Links out/.exec(s)?.[1];
      assert.ok(links, s);
      return answer('Back to the links', [{ switch_tab: { tab_id: Number(links) } }]);
    },
    () => answer('Open pricing', [{ open_tab: { url: `${o.h.fixtures.url}/actions/pricing.html` } }]),
    (s) => {
      const report = /tab (\d+): Page B/.exec(s)?.[1];
      return answer('Close the report', [{ close_tab: { tab_id: Number(report) } }]);
    },
  ]);
  assert.ok(!availableActions(agent[0]).includes('switch_tab'), 'tab switching needs a second tab');
  assert.match(lastResults(states[1]), /it opened a new tab \(tab \d+\) at http[^ ]+history-b\.html, which is now the current tab/);
  assert.equal(field(states[1], 'Title'), 'Page B');
  assert.ok(availableActions(agent[1]).includes('switch_tab') && availableActions(agent[1]).includes('close_tab'));
  assert.equal(field(states[2], 'Title'), 'Links out');
  assert.equal(field(states[3], 'Title'), 'Pricing');
  assert.match(lastResults(states[4]), /Closed tab \d+/);
  assert.equal(await reports(), reportsBefore, 'the report tab the link opened is closed again');
  const titles = await Promise.all(o.h.context.pages().map((p) => p.title()));
  assert.ok(titles.includes('Pricing') && titles.includes('Links out'));
  // The tab the task opened is in its tab group ("Tabwright · " and the task's first words);
  // the one it started on is not.
  const grouping = await o.panel.evaluate(async () => {
    const [group] = (await chrome.tabGroups.query({})).filter((g) => g.title.startsWith('Tabwright · '));
    const tabs = await chrome.tabs.query({});
    return { group: group?.id ?? null, tabs: tabs.map((t) => ({ title: t.title, groupId: t.groupId })) };
  });
  assert.ok(grouping.group !== null, 'a Tabwright group was made');
  assert.equal(grouping.tabs.find((t) => t.title === 'Pricing').groupId, grouping.group, JSON.stringify(grouping));
  assert.equal(grouping.tabs.find((t) => t.title === 'Links out').groupId, -1, 'the user\'s tab stays ungrouped');
});

test('extract reads the whole page as markdown with the extraction model and returns what it found', async () => {
  const page = await o.open('actions/pricing.html');
  let seen = null;
  const { states, bodies } = await runScript(page, 'What does the Team plan cost?', [
    () => answer('Read the prices', [{ extract: { query: 'the price of each plan' } }]),
  ], (state, body) => {
    seen = { state, body };
    return { output: { found: true, content: 'Starter: 9 €; Team: 29 €; Enterprise: on request' } };
  });
  assert.ok(seen, 'the extraction model was asked');
  assert.equal(seen.body.model, 'mock-extractor');
  assert.match(seen.state, /<query>\nthe price of each plan\n<\/query>/);
  assert.match(seen.state, /\| Team \| 29 € \|/, 'the table arrives as markdown');
  assert.match(seen.state, /\[terms\]\(http:\/\/127\.0\.0\.1:\d+\/actions\/history-b\.html\)/, 'links are absolute');
  assert.doesNotMatch(seen.state, /Secret internal price/, 'hidden text is not read');
  assert.equal(bodies.filter((b) => b.response_format.json_schema.name === 'extraction').length, 1);
  assert.match(lastResults(states[1]), /Extracted "the price of each plan" from the page[^\n]*\n<page_content>\nStarter: 9 €; Team: 29 €/);
});

test('screenshot attaches a PNG of the page to the next request', async () => {
  const page = await o.open('actions/pricing.html');
  const { agent, states } = await runScript(page, 'Look at the pricing page', [
    () => answer('Look', [{ screenshot: {} }]),
  ]);
  assert.equal(typeof agent[0].messages[1].content, 'string', 'no image before the screenshot');
  const parts = agent[1].messages[1].content;
  assert.ok(Array.isArray(parts), 'the request after the screenshot carries an image');
  const url = parts.find((p) => p.type === 'image_url').image_url.url;
  const png = Buffer.from(url.replace('data:image/png;base64,', ''), 'base64');
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.ok(png.length > 1000);
  assert.match(lastResults(states[1]), /Took a screenshot of the viewport \(\d+×\d+ pixels\)/);
});

test('evaluate is offered only on the host the user allowed, and runs the script there', async () => {
  const allowed = await o.open('actions/script-page.html');
  await allowed.goto(`${o.h.fixtures.otherUrl}/actions/script-page.html`);
  const { agent, states } = await runScript(allowed, 'How many visitors?', [
    () => answer('Read the numbers', [{ evaluate: { code: 'document.title = "Checked"; window.dashboard.visitors * 2' } }]),
  ]);
  assert.match(field(states[0], 'URL'), /^http:\/\/localhost:/);
  assert.ok(offeredActions(agent[0]).includes('evaluate'), 'offered on localhost, which the user allowed');
  assert.match(lastResults(states[1]), /Ran the script; its value is in the results below\n<page_content>\n2468\n<\/page_content>/);
  assert.equal(await allowed.title(), 'Checked');

  const other = await o.open('actions/script-page.html');
  const { agent: elsewhere } = await runScript(other, 'How many visitors?', []);
  assert.match(textOf(elsewhere[0]), /URL: http:\/\/127\.0\.0\.1:/);
  assert.ok(!offeredActions(elsewhere[0]).includes('evaluate'), 'not offered on 127.0.0.1');
});

test('evaluate is decided in the worker: a page that replaces URL, JSON, location and the prototypes a check would call neither stops the script nor fools the check', async () => {
  const page = await o.open('actions/patched-script-page.html');
  await page.goto(`${o.h.fixtures.otherUrl}/actions/patched-script-page.html`);
  assert.ok(await page.evaluate(() => [1].some(() => true) === false && JSON.stringify(1) === '"elsewhere.example"'), 'the page patched itself');
  const { states } = await runScript(page, 'How many visitors?', [
    () => answer('Read the numbers', [{ evaluate: { code: 'window.dashboard.visitors + 1' } }]),
  ]);
  // The page's JSON.stringify would say "elsewhere.example": the value comes back through the
  // debugger, untouched by the page.
  assert.match(lastResults(states[1]), /Ran the script; its value is in the results below\n<page_content>\n1235\n<\/page_content>/);
});

test('ask_human pauses the task until the user answers in the side panel', async () => {
  const page = await o.open('actions/otp.html');
  const run = runScript(page, 'Verify the login', [
    () => answer('Ask for the code', [{ ask_human: { question: 'What is the 6-digit code sent to your phone?' } }]),
    (s) => {
      const code = /The user answered: (\d+)/.exec(s)?.[1];
      return answer('Enter it', [
        { input: { index: mustFind(s, '6-digit code'), text: code, clear: true } },
        { click: { index: mustFind(s, 'Verify'), x: null, y: null } },
      ]);
    },
  ]);
  const box = o.panel.locator('.question textarea');
  await box.waitFor({ timeout: 30_000 });
  assert.match(await o.panel.locator('.question-text').innerText(), /6-digit code/);
  assert.equal(await o.panel.locator('#status').innerText(), 'Waiting for your answer');
  await o.h.screenshot(o.panel, 'ask-human-question');
  const asked = o.llm.requests.length;
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(o.llm.requests.length, asked, 'nothing runs while the question waits');
  await box.fill('424242');
  await box.press('Enter');
  const { states } = await run;
  assert.match(lastResults(states[1]), /ask_human: The user answered: 424242/);
  assert.equal(await page.locator('#out').innerText(), 'Verified');
  assert.match(await o.panel.locator('.question .answer').last().innerText(), /424242/);
});

test('done with an output schema returns data of that shape, and data of another shape goes back to the LLM', async () => {
  const page = await o.open('actions/pricing.html');
  const schema = {
    type: 'object',
    properties: { plans: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, euros: { type: ['number', 'null'] } }, required: ['name', 'euros'] } } },
    required: ['plans'],
  };
  const before = o.llm.requests.length;
  o.setPolicy(script([
    () => answer('Report', [{ done: { data: { plans: [{ name: 'Team', euros: '29' }] }, success: true } }]),
    () => answer('Report again', [{ done: { data: { plans: [{ name: 'Starter', euros: 9 }, { name: 'Team', euros: 29 }] }, success: true } }]),
  ]));
  try {
    await page.bringToFront();
    await o.panel.bringToFront();
    const tabId = await o.panel.evaluate(async () => (await chrome.tabs.query({})).find((t) => t.title === 'Pricing' && t.active)?.id
      ?? (await chrome.tabs.query({ title: 'Pricing' })).at(-1).id);
    const finals = await o.panel.locator('.final').count();
    const reply = await o.panel.evaluate((request) => chrome.runtime.sendMessage({ to: 'core', request }),
      { v: 1, type: 'start_task', task: 'List the plans and their prices', tab_id: tabId, start_url: null, output_schema: schema });
    assert.equal(reply.type, 'task_accepted');
    assert.equal(reply.queued, false);
    await o.panel.locator('.final').nth(finals).waitFor({ timeout: 30_000 });
    const bodies = o.llm.requests.slice(before).map((r) => r.body);
    const done = bodies[0].response_format.json_schema.schema.properties.action.items.anyOf
      .find((b) => b.properties.done).properties.done;
    assert.deepEqual(Object.keys(done.properties), ['data', 'success']);
    assert.match(textOf(bodies[1]), /`data\.plans\[0\]\.euros` must be number or null, not a string/);
    const status = await o.panel.evaluate((taskId) => chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'get_status', task_id: taskId } }), reply.task_id);
    const end = status.events.at(-1).end;
    assert.deepEqual(end.data, { plans: [{ name: 'Starter', euros: 9 }, { name: 'Team', euros: 29 }] });
  } finally {
    o.setPolicy(null);
  }
});

test('a key press while another debugger holds the tab says so, and the task goes on', async () => {
  const page = await o.open('actions/search-box.html');
  const title = 'Site search';
  const held = await o.panel.evaluate(async (title) => {
    const tab = (await chrome.tabs.query({ title })).at(-1);
    await chrome.debugger.attach({ tabId: tab.id }, '1.3');
    return tab.id;
  }, title);
  try {
    const { states } = await runScript(page, 'Press Escape', [
      () => answer('Press Escape', [{ send_keys: { keys: 'Escape' } }]),
    ]);
    assert.match(lastResults(states[1]), /Pressing keys needs the browser's debugger, which is not available here: another debugger \(DevTools or another extension\) is attached to this tab/);
    assert.equal(states.length, 2, 'the error went back to the model, which finished');
  } finally {
    await o.panel.evaluate((tabId) => chrome.debugger.detach({ tabId }), held);
  }
});

test('input types into a contenteditable editor, replacing or appending, and the page hears it', async () => {
  const page = await o.open('contenteditable.html');
  const { states } = await runScript(page, 'Rewrite the note', [
    (s) => answer('Replace the note', [{ input: { index: mustFind(s, 'Note editor'), text: 'Buy tea', clear: true } }]),
    (s) => answer('Add to it', [{ input: { index: mustFind(s, 'Note editor'), text: ' and milk', clear: false } }]),
  ]);
  assert.match(lastResults(states[1]), /input: Typed "Buy tea" into \[\d+\] <div>/);
  assert.equal((await page.locator('.editor').innerText()).trim(), 'Buy tea and milk');
  assert.equal(await page.locator('#mirror').innerText(), 'Saved: Buy tea and milk', 'the page got input events');
});

test('a popup opened blank and given its address later joins the task tabs once it loads', async () => {
  const page = await o.open('actions/popup-blank.html');
  const { states } = await runScript(page, 'Pay in the secure window', [
    (s) => answer('Open the payment window', [{ click: { index: mustFind(s, 'Pay in a secure window'), x: null, y: null } }]),
    (s) => {
      // Depending on when it loads, the popup is already the current tab, or listed beside it.
      if (field(s, 'Title') === 'Pricing') return done();
      const popup = /tab (\d+): Pricing/.exec(s)?.[1];
      assert.ok(popup, `the popup is listed once it loaded:\n${s}`);
      return answer('Go to the payment window', [{ switch_tab: { tab_id: Number(popup) } }]);
    },
  ]);
  assert.match(states[1], /Tabs:\n {2}tab \d+[^\n]*: Checkout[^\n]*\n {2}tab \d+[^\n]*: Pricing/);
  assert.equal(field(states.at(-1), 'Title'), 'Pricing');
});

test('a sign-in popup that closes itself hands the task back to the page that opened it', async () => {
  const page = await o.open('actions/oauth.html');
  const { states } = await runScript(page, 'Sign in with the provider', [
    (s) => answer('Open the sign-in window', [{ click: { index: mustFind(s, 'Sign in with Provider'), x: null, y: null } }]),
    (s) => {
      assert.equal(field(s, 'Title'), 'Authorize', 'the popup is the current tab');
      return answer('Allow', [{ click: { index: mustFind(s, 'Allow'), x: null, y: null } }]);
    },
  ]);
  assert.match(lastResults(states[2]), /the tab closed itself, so the current tab is now tab \d+ at http[^ ]+oauth\.html/);
  assert.equal(field(states[2], 'Title'), 'Sign in');
  assert.match(pageOf(states[2]), /Signed in with Provider/);
  assert.doesNotMatch(states[2], /Tabs:/, 'the closed popup is no longer listed');
});

test('alert, confirm and prompt a click causes do not block the task: answered at once and told to the model', async () => {
  const page = await o.open('actions/dialogs.html');
  // With a listener that never answers, a dialog stays open as it would for a person away
  // from the screen (otherwise Playwright closes it itself).
  const seen = [];
  let taskOver = false;
  page.on('dialog', (dialog) => {
    seen.push(dialog.message());
    if (taskOver) dialog.dismiss();
  });
  const { states } = await runScript(page, 'Delete the draft, then rename it', [
    (state) => answer('Delete the draft', [{ click: { index: mustFind(state, />Delete draft/) } }]),
    (state) => answer('Rename it', [{ click: { index: mustFind(state, />Rename draft/) } }]),
  ]);
  assert.equal(await page.locator('#draft').count(), 0, 'the confirm was accepted');
  assert.equal(await page.locator('#status').innerText(), 'Renamed to Q3 report.', 'the prompt got its default');
  assert.deepEqual(seen, [], 'no dialog was left open for a person to answer');
  assert.match(states[1], /The page asked to confirm "Delete the draft "Quarterly report"\?"; Tabwright accepted\./);
  assert.match(states[1], /showed an alert "The draft was deleted\."/);
  assert.match(states[2], /asked for text "New name for the draft:"[^\n]*answered "Q3 report"/);
  assert.doesNotMatch(states[2], /asked to confirm/, 'each dialog is told once');

  // After the task the page's dialogs are its own again.
  taskOver = true;
  await page.evaluate(() => setTimeout(() => alert('After the task'), 0));
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(seen, ['After the task']);
  await page.close();
});
