// The DOM benchmark: Tabwright's indexer against browser-use 0.3.2's buildDomTree.js, in one
// Chromium, on the same pages, with the same viewport (1280×900) and viewport expansion (500 px).
// Both are timed the same way, in the page: from the call to a serialized JSON string ready to
// send. Prints a table and the ratios; --json FILE writes the figures.
//
// buildDomTree.js is fetched at bench time from the browser-use 0.3.2 wheel on PyPI and kept in
// .tabwright/cache/ (git-ignored); it is never committed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumPath, ROOT } from './browser.mjs';
import { loadIndexer } from './indexer-in-page.mjs';
import { startFixtureServer } from '../../tests/e2e/lib/fixture-server.mjs';

const { values: args } = parseArgs({ options: { json: { type: 'string' }, runs: { type: 'string', default: '5' } } });
const RUNS = Math.max(1, Number(args.runs));
const EXPANSION = 500;

/** buildDomTree.js from the browser-use 0.3.2 wheel, downloaded once into the cache. */
function anchorSource() {
  const cache = path.join(ROOT, '.tabwright', 'cache', 'browser-use-0.3.2');
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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Times buildDomTree in the page; returns {ms, bytes}. */
async function timeAnchor(page, source, highlight) {
  return page.evaluate(async ({ source, expansion, highlight }) => {
    const build = (0, eval)(source); // eslint-disable-line no-eval
    const started = performance.now();
    const json = JSON.stringify(build({ doHighlightElements: highlight, focusHighlightIndex: -1, viewportExpansion: expansion, debugMode: false }));
    const ms = performance.now() - started;
    document.getElementById('playwright-highlight-container')?.remove();
    window.__anchorResult = json;
    return { ms, bytes: json.length };
  }, { source, expansion: EXPANSION, highlight });
}

/** Times Tabwright's indexer in the page; returns {ms, bytes}. */
async function timeOurs(page) {
  return page.evaluate(async (expansion) => {
    const started = performance.now();
    const json = JSON.stringify(await window.tabwright.snapshot({ viewportExpansion: expansion }));
    const ms = performance.now() - started;
    window.__ourResult = json;
    return { ms, bytes: json.length };
  }, EXPANSION);
}

/** Compares the two interactive sets on the live page: which of the anchor's interactive
 * elements we also offer. An anchor element counts as found when we index it, or when we index
 * the element a person's click on it reaches — the same interaction under another tag:
 *   - a <label> whose control we index (clicking the label focuses or toggles that control),
 *     and a control whose label we index (an invisible custom checkbox: the label is what a
 *     person clicks) — see label-and-checkbox.html;
 *   - a <details> whose <summary> we index (the summary is what opens it);
 *   - anything inside an editable region we index (a click there puts the caret in that
 *     editor; see contenteditable.html).
 * Anchor elements whose xpath cannot be resolved from the document (inside shadow roots or
 * frames) are counted apart, not as misses. */
async function compare(page) {
  return page.evaluate(() => {
    const anchor = JSON.parse(window.__anchorResult);
    const ours = JSON.parse(window.__ourResult);
    const mine = new Set();
    for (const node of ours.nodes) if (node.i) mine.add(window.tabwright.elementAt(node.i));
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
    const sameInteraction = (el) => mine.has(el)
      || (el.localName === 'label' && el.control && mine.has(el.control))
      || [...(el.labels ?? [])].some((label) => mine.has(label))
      || (el.localName === 'details' && mine.has(el.querySelector(':scope > summary')))
      || (el.isContentEditable && mine.has(editorOf(el)));
    const exact = theirs.filter((el) => mine.has(el)).length;
    const missed = theirs.filter((el) => !sameInteraction(el));
    const describe = (el) => `<${el.localName}>${(el.textContent || el.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim().slice(0, 30)}`;
    return {
      ours: mine.size,
      theirs: theirs.length,
      exact,
      found: theirs.length - missed.length,
      unresolved,
      missedSamples: missed.slice(0, 5).map(describe),
    };
  });
}

const server = await startFixtureServer();
const anchor = anchorSource();
const browser = await chromium.launch({
  executablePath: chromiumPath(),
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });

const FIXTURES = ['login.html', 'hidden-elements.html', 'modal-covering.html', 'cursor-pointer.html', 'click-listener.html',
  'select-and-details.html', 'shadow-dom.html', 'sticky-header.html', 'infinite-scroll.html', 'scroll-container.html',
  'label-and-checkbox.html', 'contenteditable.html', 'react-controlled-input.html'];
const pages = [
  ...FIXTURES.map((name) => ({ name, url: `${server.url}/${name}` })),
  ...[1000, 5000, 20000, 50000].map((n) => ({ name: `generated-${n / 1000}k`, url: `${server.url}/large?n=${n}` })),
];

const rows = [];
// As in the extension, the page-world listener recorder runs before the page's own scripts.
await page.addInitScript({ content: readFileSync(path.join(ROOT, 'extension', 'content', 'page-listeners.js'), 'utf8') });
for (const { name, url } of pages) {
  await page.goto(url);
  await loadIndexer(page);
  const elements = await page.evaluate(() => document.getElementsByTagName('*').length);
  const oursMs = [];
  const anchorMs = [];
  let ours;
  let theirs;
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always meets a warm page.
    if (i % 2 === 0) {
      ours = await timeOurs(page);
      theirs = await timeAnchor(page, anchor, false);
    } else {
      theirs = await timeAnchor(page, anchor, false);
      ours = await timeOurs(page);
    }
    oursMs.push(ours.ms);
    anchorMs.push(theirs.ms);
  }
  // The interactive sets: the anchor's as browser-use runs it (highlighting on, which is also
  // what makes it drop nested duplicates).
  await timeAnchor(page, anchor, true);
  const overlap = await compare(page);
  const ms = median(oursMs);
  const aMs = median(anchorMs);
  rows.push({
    name,
    elements,
    ms: Number(ms.toFixed(2)),
    anchor_ms: Number(aMs.toFixed(2)),
    time_ratio: Number((ms / aMs).toFixed(3)),
    bytes: ours.bytes,
    anchor_bytes: theirs.bytes,
    bytes_ratio: Number((ours.bytes / theirs.bytes).toFixed(3)),
    interactive: overlap.ours,
    anchor_interactive: overlap.theirs,
    anchor_recall: overlap.theirs ? Number((overlap.found / overlap.theirs).toFixed(3)) : 1,
    exact_recall: overlap.theirs ? Number((overlap.exact / overlap.theirs).toFixed(3)) : 1,
    unresolved: overlap.unresolved,
    missed: overlap.missedSamples,
  });
}
await browser.close();
await server.close();

const pad = (v, n) => String(v).padStart(n);
console.log(`DOM benchmark — ${RUNS} runs per page (median), viewport 1280×900, expansion ${EXPANSION} px`);
console.log(`${'page'.padEnd(22)}${pad('elements', 9)}${pad('ms', 9)}${pad('anchor ms', 11)}${pad('time ×', 8)}${pad('bytes', 9)}${pad('anchor B', 10)}${pad('bytes ×', 9)}${pad('ours', 6)}${pad('anchor', 8)}${pad('recall', 8)}${pad('exact', 8)}`);
const percent = (x) => `${(x * 100).toFixed(1)}%`;
for (const r of rows) {
  console.log(`${r.name.padEnd(22)}${pad(r.elements, 9)}${pad(r.ms.toFixed(1), 9)}${pad(r.anchor_ms.toFixed(1), 11)}${pad(r.time_ratio.toFixed(2), 8)}${pad(r.bytes, 9)}${pad(r.anchor_bytes, 10)}${pad(r.bytes_ratio.toFixed(3), 9)}${pad(r.interactive, 6)}${pad(r.anchor_interactive, 8)}${pad(percent(r.anchor_recall), 8)}${pad(percent(r.exact_recall), 8)}`);
}
console.log('recall: share of the anchor\'s interactive elements we offer (the same element, or the one its click reaches); exact: the same element only.');
for (const r of rows.filter((row) => row.unresolved)) console.log(`  ${r.name}: ${r.unresolved} anchor elements inside shadow roots or frames could not be matched and are not counted`);
for (const r of rows.filter((row) => row.missed.length)) console.log(`  ${r.name}: anchor elements not indexed by us, e.g. ${r.missed.join(' | ')}`);
const big = rows.filter((r) => r.elements >= 5000);
const worst = (xs, key) => Math.max(...xs.map((r) => r[key]));
console.log(`Goals: time ≤ 1/3 of the anchor on pages ≥ 5k elements (worst ${worst(big, 'time_ratio').toFixed(2)}); `
  + `bytes ≤ 1/10 (worst ${worst(rows, 'bytes_ratio').toFixed(3)}); `
  + `50k page under 500 ms (${rows.find((r) => r.name === 'generated-50k')?.ms.toFixed(0)} ms); `
  + `recall ≥ 95% (lowest ${(Math.min(...rows.map((r) => r.anchor_recall)) * 100).toFixed(1)}%)`);
if (args.json) {
  writeFileSync(args.json, `${JSON.stringify({ pages: rows.map(({ missed, ...r }) => r) }, null, 2)}\n`);
  console.log(`Figures written to ${args.json}`);
}
