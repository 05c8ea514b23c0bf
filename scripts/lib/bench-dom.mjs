// The DOM benchmark: Tabwright's indexer against browser-use 0.3.2's buildDomTree.js, in one
// Chromium, on the same pages, with the same viewport (1280×900), timed at the same viewport
// expansion (500 px, browser-use's default):
// our fixture pages, generated large pages, and the saved real pages of tests/fixtures/real-pages/
// (pages nobody here wrote; see the README there). Both are timed the same way, in the page:
// from the call to a serialized JSON string ready to send. Besides time and bytes, it compares
// what each shows its model: `text_chars`, our state text for the page (the core's own
// `prompt::page_listing`, through examples/state_text.rs), against `anchor_text_chars`,
// browser-use's own `clickable_elements_to_string` over its buildDomTree.js result with the
// attributes its Agent includes by default, cut at its 40,000 characters (its Python, run by
// scripts/lib/anchor_text.py); and `anchor_recall`, the share of the anchor's interactive
// elements we also index. Texts and recall are each side's with its own defaults: ours lists
// what is on screen (viewport expansion 0, src/settings.rs; --expansion N for another), the
// anchor's asks for 500 px more but its top-most test (elementFromPoint at an element's centre,
// null outside the window) keeps only what is on screen too. Prints a table and the goals;
// --json FILE writes the figures.
//
// The browser-use 0.3.2 wheel is fetched at bench time from PyPI and kept in .tabwright/cache/
// (git-ignored); none of it is committed.
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumPath, ROOT } from './browser.mjs';
import { indexerSource } from './indexer-in-page.mjs';
import { startFixtureServer, realPages } from '../../tests/e2e/lib/fixture-server.mjs';

const { values: args } = parseArgs({
  options: {
    json: { type: 'string' }, runs: { type: 'string', default: '5' }, pages: { type: 'string' },
    expansion: { type: 'string', default: '0' },
  },
});
const RUNS = Math.max(1, Number(args.runs));
const EXPANSION = 500;
// Our state text is taken with the extension's own default (DEFAULT_VIEWPORT_EXPANSION).
const OUR_EXPANSION = Number(args.expansion);

const ANCHOR_DIR = path.join(ROOT, '.tabwright', 'cache', 'browser-use-0.3.2');

/** buildDomTree.js from the browser-use 0.3.2 wheel, downloaded once into the cache. */
function anchorSource() {
  const cache = ANCHOR_DIR;
  const file = path.join(cache, 'browser_use', 'dom', 'buildDomTree.js');
  if (!existsSync(file)) {
    mkdirSync(cache, { recursive: true });
    console.error('Fetching browser-use 0.3.2 from PyPI (for buildDomTree.js)…');
    execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--dest', cache, 'browser-use==0.3.2'], { stdio: 'inherit' });
    const wheel = readdirSync(cache).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error('pip did not download the browser-use wheel');
    execFileSync('python3', ['-m', 'zipfile', '-e', path.join(cache, wheel), cache]);
  }
  return readFileSync(file, 'utf8');
}

/** A Python that can import the anchor's DOM modules (they need pydantic and python-dotenv):
 * the system's when it has both, else a virtual environment in the cache with them. */
function anchorPython() {
  const has = (python) => {
    try {
      execFileSync(python, ['-c', 'import pydantic, dotenv'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (has('python3')) return 'python3';
  const venv = path.join(ROOT, '.tabwright', 'cache', 'anchor-venv');
  const python = path.join(venv, 'bin', 'python3');
  if (!has(python)) {
    console.error('Installing pydantic and python-dotenv for the anchor\'s Python…');
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(python, ['-m', 'pip', 'install', '--quiet', 'pydantic>=2', 'python-dotenv'], { stdio: 'inherit' });
  }
  return python;
}

/** A line-oriented helper process: send(object) resolves to its one-line JSON answer. */
function lineProcess(command, argv, options = {}) {
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'], ...options });
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.resolve(JSON.parse(line)));
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`${command} exited (${code})`));
  });
  return {
    send(value) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
      });
    },
    close() {
      child.stdin.end();
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Defines buildDomTree and our indexer in the page. Evaluated as text, which a page's own
 * Content-Security-Policy does not govern (the saved real pages are served without scripts). */
async function loadBoth(page, source) {
  await page.evaluate(`window.__anchorBuild = (${source.trim().replace(/;$/, "")});`);
  await page.evaluate(indexerSource());
}

/** Times buildDomTree in the page; returns {ms, bytes}. */
async function timeAnchor(page, highlight) {
  return page.evaluate(async ({ expansion, highlight }) => {
    const build = window.__anchorBuild;
    const started = performance.now();
    const json = JSON.stringify(build({ doHighlightElements: highlight, focusHighlightIndex: -1, viewportExpansion: expansion, debugMode: false }));
    const ms = performance.now() - started;
    document.getElementById('playwright-highlight-container')?.remove();
    window.__anchorResult = json;
    return { ms, bytes: json.length };
  }, { expansion: EXPANSION, highlight });
}

/** Times Tabwright's indexer in the page; returns {ms, bytes}. */
async function timeOurs(page, expansion = EXPANSION) {
  return page.evaluate(async (expansion) => {
    const started = performance.now();
    const json = JSON.stringify(await window.tabwright.snapshot({ viewportExpansion: expansion }));
    const ms = performance.now() - started;
    window.__ourResult = json;
    return { ms, bytes: json.length };
  }, expansion);
}

/** Compares the two interactive sets on the live page: which of the anchor's interactive
 * elements we also offer (`listed`: the elements our state text shows, by their numbers in the
 * page). An anchor element counts as found when we index it, or when we index
 * the element a person's click on it reaches — the same interaction under another tag:
 *   - a <label> whose control we index (clicking the label focuses or toggles that control),
 *     and a control whose label we index (an invisible custom checkbox: the label is what a
 *     person clicks) — see label-and-checkbox.html;
 *   - a <details> whose <summary> we index (the summary is what opens it);
 *   - anything inside an editable region we index (a click there puts the caret in that
 *     editor; see contenteditable.html);
 *   - a part of an element we index with nothing of its own that makes it another control (no
 *     native control, role, tabindex, on-click attribute or cursor that starts there): the
 *     <span> inside a link, which buildDomTree lists because it inherits the link's pointer
 *     cursor; a click on it is a click on the link;
 *   - a wrapper the core leaves out because it says nothing and holds one control (an
 *     <li role=option> around its <a>: src/dom/stitch.rs): that control is what a click on it
 *     reaches.
 * Anchor elements whose xpath cannot be resolved from the document (inside shadow roots or
 * frames) are counted apart, not as misses. */
async function compare(page, listed) {
  return page.evaluate((listed) => {
    const anchor = JSON.parse(window.__anchorResult);
    const mine = new Set(listed.map((i) => window.tabwright.elementAt(i)));
    const indexed = new Set(JSON.parse(window.__ourResult).nodes.filter((n) => n.i).map((n) => window.tabwright.elementAt(n.i)));
    const theirs = [];
    let unresolved = 0;
    for (const node of Object.values(anchor.map)) {
      if (node.highlightIndex === undefined || node.highlightIndex === null) continue;
      const el = document.evaluate(`/${node.xpath}`, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
      if (el && el.nodeType === Node.ELEMENT_NODE) theirs.push(el);
      else unresolved += 1;
    }
    const editorOf = (el) => {
      let host = el.parentElement;
      while (host && host.parentElement?.isContentEditable) host = host.parentElement;
      return host?.isContentEditable ? host : null;
    };
    const flatParent = (n) => n.assignedSlot ?? n.parentNode ?? n.host ?? null;
    const insideIndexed = (el) => {
      for (let n = flatParent(el); n; n = flatParent(n)) if (mine.has(n)) return true;
      return false;
    };
    const ownControl = (el) => {
      const parent = flatParent(el);
      const parentCursor = parent?.nodeType === Node.ELEMENT_NODE ? getComputedStyle(parent).cursor : 'auto';
      return window.tabwright.classify(el, getComputedStyle(el).cursor, parentCursor, false) !== null;
    };
    const sameInteraction = (el) => mine.has(el)
      || (el.localName === 'label' && el.control && mine.has(el.control))
      || [...(el.labels ?? [])].some((label) => mine.has(label))
      || (el.localName === 'details' && mine.has(el.querySelector(':scope > summary')))
      || (el.isContentEditable && mine.has(editorOf(el)))
      || (insideIndexed(el) && !ownControl(el))
      || (indexed.has(el) && [...mine].some((m) => m !== el && el.contains(m)));
    const exact = theirs.filter((el) => mine.has(el)).length;
    const missed = theirs.filter((el) => !sameInteraction(el));
    const describe = (el) => (window.__allMissed
      ? el.outerHTML.replace(/\s+/g, ' ').slice(0, 300)
      : `<${el.localName}>${(el.textContent || el.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim().slice(0, 30)}`);
    return {
      ours: mine.size,
      theirs: theirs.length,
      exact,
      found: theirs.length - missed.length,
      unresolved,
      missedSamples: missed.slice(0, window.__allMissed ? 1000 : 5).map(describe),
    };
  }, listed);
}

/** The state texts: ours from the core (examples/state_text.rs), the anchor's from its Python. */
console.error('Building examples/state_text.rs…');
execFileSync('cargo', ['build', '--release', '--quiet', '--example', 'state_text'], { cwd: ROOT, stdio: 'inherit' });
const anchor = anchorSource();
const ourText = lineProcess(path.join(ROOT, 'target', 'release', 'examples', 'state_text'), []);
const anchorText = lineProcess(anchorPython(), [path.join(ROOT, 'scripts', 'lib', 'anchor_text.py'), ANCHOR_DIR]);

const server = await startFixtureServer();
const browser = await chromium.launch({
  executablePath: chromiumPath(),
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
// The saved real pages name their sites' scripts, styles and images; nothing leaves this machine.
await page.route('**/*', (route) => (route.request().url().startsWith(server.url) ? route.continue() : route.abort()));

const FIXTURES = ['login.html', 'hidden-elements.html', 'modal-covering.html', 'cursor-pointer.html', 'click-listener.html',
  'select-and-details.html', 'shadow-dom.html', 'sticky-header.html', 'infinite-scroll.html', 'scroll-container.html',
  'label-and-checkbox.html', 'contenteditable.html', 'react-controlled-input.html'];
let pages = [
  ...FIXTURES.map((name) => ({ name, url: `${server.url}/${name}`, kind: 'fixture' })),
  ...[1000, 5000, 20000, 50000].map((n) => ({ name: `generated-${n / 1000}k`, url: `${server.url}/large?n=${n}`, kind: 'generated' })),
  ...realPages().map((name) => ({ name: name.replace(/\.html$/, ''), url: `${server.url}/real/${name}`, kind: 'real' })),
];
if (args.pages) pages = pages.filter((p) => p.name.includes(args.pages));

const rows = [];
// As in the extension, the page-world listener recorder runs before the page's own scripts.
await page.addInitScript({ content: readFileSync(path.join(ROOT, 'extension', 'content', 'page-listeners.js'), 'utf8') });
for (const { name, url, kind } of pages) {
  await page.goto(url);
  await loadBoth(page, anchor);
  if (process.env.BENCH_MISSED) await page.evaluate(() => { window.__allMissed = true; });
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  const oursMs = [];
  const anchorMs = [];
  let ours;
  let theirs;
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always meets a warm page.
    if (i % 2 === 0) {
      ours = await timeOurs(page);
      theirs = await timeAnchor(page, false);
    } else {
      theirs = await timeAnchor(page, false);
      ours = await timeOurs(page);
    }
    oursMs.push(ours.ms);
    anchorMs.push(theirs.ms);
  }
  // The interactive sets and the texts: ours with our default expansion, the anchor's as
  // browser-use runs it (highlighting on, which is also what makes it drop nested duplicates).
  await timeOurs(page, OUR_EXPANSION);
  await timeAnchor(page, true);
  const { ourJson, anchorJson, above, below } = await page.evaluate(() => ({
    ourJson: window.__ourResult,
    anchorJson: window.__anchorResult,
    above: Math.round(scrollY),
    below: Math.max(0, Math.round(document.documentElement.scrollHeight - scrollY - innerHeight)),
  }));
  const [text, anchorTextReply] = await Promise.all([
    ourText.send(ourJson),
    anchorText.send(`{"result": ${anchorJson}, "pixels_above": ${above}, "pixels_below": ${below}}`),
  ]);
  if (text.error) throw new Error(`${name}: the core refused our snapshot: ${text.error}`);
  // What we offer is what the model is shown: the elements of our state text.
  const overlap = await compare(page, text.listed);
  if (anchorTextReply.error) throw new Error(`${name}: the anchor's Python failed: ${anchorTextReply.error}`);
  if (process.env.BENCH_TEXTS) {
    mkdirSync(process.env.BENCH_TEXTS, { recursive: true });
    writeFileSync(path.join(process.env.BENCH_TEXTS, `${name}.ours.txt`), text.text);
    writeFileSync(path.join(process.env.BENCH_TEXTS, `${name}.anchor.txt`), anchorTextReply.text);
  }
  const ms = median(oursMs);
  const aMs = median(anchorMs);
  rows.push({
    name,
    kind,
    elements,
    ms: Number(ms.toFixed(2)),
    anchor_ms: Number(aMs.toFixed(2)),
    time_ratio: Number((ms / aMs).toFixed(3)),
    bytes: ours.bytes,
    anchor_bytes: theirs.bytes,
    bytes_ratio: Number((ours.bytes / theirs.bytes).toFixed(3)),
    text_chars: text.chars,
    anchor_text_chars: anchorTextReply.chars,
    text_ratio: Number((text.chars / anchorTextReply.chars).toFixed(3)),
    interactive: overlap.ours,
    anchor_interactive: overlap.theirs,
    anchor_found: overlap.found,
    anchor_recall: overlap.theirs ? Number((overlap.found / overlap.theirs).toFixed(3)) : 1,
    exact_recall: overlap.theirs ? Number((overlap.exact / overlap.theirs).toFixed(3)) : 1,
    unresolved: overlap.unresolved,
    missed: overlap.missedSamples,
  });
}
await browser.close();
await server.close();
ourText.close();
anchorText.close();

const pad = (v, n) => String(v).padStart(n);
const percent = (x) => `${(x * 100).toFixed(1)}%`;
console.log(`DOM benchmark — ${RUNS} runs per page (median), viewport 1280×900, timed at expansion ${EXPANSION} px; `
  + `texts and recall with each side's default (ours ${OUR_EXPANSION} px, the anchor's ${EXPANSION} px)`);
console.log(`${'page'.padEnd(30)}${pad('elements', 9)}${pad('ms', 8)}${pad('anchor ms', 10)}${pad('time ×', 8)}${pad('bytes ×', 9)}`
  + `${pad('text', 8)}${pad('anchor', 8)}${pad('text ×', 8)}${pad('ours', 6)}${pad('anchor', 8)}${pad('recall', 8)}${pad('exact', 8)}`);
for (const r of rows) {
  console.log(`${r.name.slice(0, 29).padEnd(30)}${pad(r.elements, 9)}${pad(r.ms.toFixed(1), 8)}${pad(r.anchor_ms.toFixed(1), 10)}`
    + `${pad(r.time_ratio.toFixed(2), 8)}${pad(r.bytes_ratio.toFixed(3), 9)}${pad(r.text_chars, 8)}${pad(r.anchor_text_chars, 8)}`
    + `${pad(r.text_ratio.toFixed(2), 8)}${pad(r.interactive, 6)}${pad(r.anchor_interactive, 8)}${pad(percent(r.anchor_recall), 8)}${pad(percent(r.exact_recall), 8)}`);
}
console.log('text: characters of the state text the model reads (ours: the core\'s element list; anchor: browser-use 0.3.2\'s, default attributes, its 40,000-character cut).');
console.log('recall: share of the anchor\'s interactive elements we offer (the same element, or the one its click reaches); exact: the same element only.');
for (const r of rows.filter((row) => row.unresolved)) console.log(`  ${r.name}: ${r.unresolved} anchor elements inside shadow roots or frames could not be matched and are not counted`);
for (const r of rows.filter((row) => row.missed.length)) {
  if (process.env.BENCH_MISSED) console.log(`  ${r.name}: anchor elements not indexed by us:\n    ${r.missed.join('\n    ')}`);
  else console.log(`  ${r.name}: anchor elements not indexed by us, e.g. ${r.missed.join(' | ')}`);
}

const sum = (xs, key) => xs.reduce((total, r) => total + r[key], 0);
const real = rows.filter((r) => r.kind === 'real');
const totals = real.length ? {
  pages: real.length,
  text_chars: sum(real, 'text_chars'),
  anchor_text_chars: sum(real, 'anchor_text_chars'),
  text_ratio: Number((sum(real, 'text_chars') / sum(real, 'anchor_text_chars')).toFixed(3)),
  anchor_interactive: sum(real, 'anchor_interactive'),
  anchor_found: sum(real, 'anchor_found'),
  anchor_recall: Number((sum(real, 'anchor_found') / Math.max(1, sum(real, 'anchor_interactive'))).toFixed(4)),
  lowest_recall: Math.min(...real.map((r) => r.anchor_recall)),
} : null;
const big = rows.filter((r) => r.elements >= 5000);
const worst = (xs, key) => (xs.length ? Math.max(...xs.map((r) => r[key])) : NaN);
console.log(`Goals: time ≤ 1/3 of the anchor on pages ≥ 5k elements (worst ${worst(big, 'time_ratio').toFixed(2)}); `
  + `bytes ≤ 1/10 (worst ${worst(rows, 'bytes_ratio').toFixed(3)}); `
  + `50k page under 500 ms (${rows.find((r) => r.name === 'generated-50k')?.ms.toFixed(0) ?? '-'} ms); `
  + `recall ≥ 95% on our pages (lowest ${(Math.min(...rows.filter((r) => r.kind !== 'real').map((r) => r.anchor_recall)) * 100).toFixed(1)}%)`);
if (totals) {
  console.log(`Real pages (${totals.pages}): recall ≥ 98% pooled (${percent(totals.anchor_recall)}: ${totals.anchor_found} of ${totals.anchor_interactive}) `
    + `and ≥ 90% on every page (lowest ${percent(totals.lowest_recall)}); `
    + `text ≤ 0.8 of the anchor's pooled (${totals.text_ratio.toFixed(3)}: ${totals.text_chars} against ${totals.anchor_text_chars} characters)`);
}
if (args.json) {
  writeFileSync(args.json, `${JSON.stringify({ pages: rows.map(({ missed, ...r }) => r), real_pages: totals }, null, 2)}\n`);
  console.log(`Figures written to ${args.json}`);
}
