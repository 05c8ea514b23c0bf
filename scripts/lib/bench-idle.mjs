// The idle benchmark: what having Tabwright installed costs the pages a person opens while no
// task runs. Goal: nothing (extension/page-scripts.js), so a ratio of at most 1.02 for load
// time and for JS heap.
//
// One Chromium, one profile, with the extension loaded. The saved real pages
// (tests/fixtures/real-pages, served as the e2e fixture server serves them) are each loaded
// --runs times (4 by default) with the extension enabled and as many with it disabled, in
// rounds: each round loads every page with the extension, then every page without, or the
// other way round, the arm going first taking turns (with, without; without, with; …), so that
// with an even number of rounds a browser that slows down as it goes weighs on both arms alike.
// A first round of each is not counted. The extension is switched off and on from
// chrome://extensions (chrome.management.setEnabled, as the person's toggle does) a few
// seconds before a round: switching it on starts its worker, which the pages of an installed
// extension do not pay. Each load is a new tab, the cache disabled (every load fetches the page
// as a first visit does), hosts other than the fixture server's failing at once; once the page
// has loaded and a quiet moment has passed for scripts that run after it (a document_idle
// content script), the tab's load time (navigation start to the end of its load event) and its
// JS heap after a full garbage collection (CDP Runtime.getHeapUsage: the page's own world and
// any extension's script world in it) are read.
//
// Figures: per page, the median of its loads in each arm; the load ratio is the sum of the
// pages' medians with the extension over the sum without, the heap ratio the same for the
// heap; with the median per-page difference of each. --extension DIR measures another build
// (an older one, for a before and after). --json FILE writes {"pages", "load_ratio",
// "heap_ratio", ...}.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchWithExtension, EXTENSION_DIR } from './browser.mjs';
import { startFixtureServer, realPages } from '../../tests/e2e/lib/fixture-server.mjs';
import { median } from './stats.mjs';

const { values: args } = parseArgs({
  options: {
    json: { type: 'string' },
    runs: { type: 'string', default: '4' },
    pages: { type: 'string' },
    extension: { type: 'string' },
  },
});
const RUNS = Math.max(1, Number(args.runs) || 4);
const EXTENSION = path.resolve(args.extension ?? EXTENSION_DIR);
// After the load event, time for scripts that run once the page is idle.
const SETTLE_MS = 300;
// After the extension is switched on or off.
const SWITCH_SETTLE_MS = 3_000;

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

const fixtures = await startFixtureServer();
const profile = mkdtempSync(path.join(os.tmpdir(), 'tabwright-bench-idle-'));
// The saved pages name images and scripts on their sites; here every host but the fixture
// server's fails at once, as a lookup, instead of waiting on a network there is none of.
const browser = await launchWithExtension(profile, {
  extensionDir: EXTENSION,
  args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'],
});
const { context, extensionId } = browser;

try {
  // The switch a person uses: chrome://extensions may turn extensions on and off.
  const switchboard = await context.newPage();
  await switchboard.goto('chrome://extensions/');
  let enabled = true;
  async function setEnabled(on) {
    if (on === enabled) return;
    await switchboard.evaluate(([id, value]) => chrome.management.setEnabled(id, value), [extensionId, on]);
    enabled = on;
    // Let the browser finish turning it on (its worker starting and stopping is not what a
    // page of an installed extension pays) or off before the next load.
    await new Promise((r) => setTimeout(r, SWITCH_SETTLE_MS));
  }

  async function load(url) {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    try {
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      await page.goto(url, { waitUntil: 'load' });
      await page.waitForTimeout(SETTLE_MS);
      const loadMs = await page.evaluate(() => {
        const [nav] = performance.getEntriesByType('navigation');
        return nav.loadEventEnd - nav.startTime;
      });
      await cdp.send('HeapProfiler.enable');
      await cdp.send('HeapProfiler.collectGarbage');
      const { usedSize } = await cdp.send('Runtime.getHeapUsage');
      return { loadMs, heapBytes: usedSize };
    } finally {
      await cdp.detach().catch(() => {});
      await page.close();
    }
  }

  let names = realPages();
  if (args.pages) names = names.filter((n) => n.includes(args.pages));
  const loads = new Map(names.map((name) => [name, { with: [], without: [] }]));
  // A first round in each arm, not counted, warms the server and the browser. Then each round
  // loads every page in one arm and then in the other, the arm going first taking turns.
  for (const run of [-1, ...Array.from({ length: RUNS }, (_, i) => i)]) {
    const order = run % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
    for (const arm of order) {
      await setEnabled(arm === 'with');
      for (const name of names) {
        const figures = await load(`${fixtures.url}/real/${name}`);
        if (process.env.BENCH_IDLE_VERBOSE) console.log(`  ${name} ${arm} run ${run}: ${figures.loadMs.toFixed(1)} ms, ${(figures.heapBytes / 1e6).toFixed(2)} MB`);
        if (run >= 0) loads.get(name)[arm].push(figures);
      }
    }
  }
  const rows = [];
  for (const [name, arms] of loads) {
    const row = {
      page: name,
      load_ms_with: median(arms.with.map((f) => f.loadMs)),
      load_ms_without: median(arms.without.map((f) => f.loadMs)),
      heap_bytes_with: median(arms.with.map((f) => f.heapBytes)),
      heap_bytes_without: median(arms.without.map((f) => f.heapBytes)),
    };
    rows.push(row);
    console.log(`${name.padEnd(44)} load ${row.load_ms_with.toFixed(1).padStart(7)} / ${row.load_ms_without.toFixed(1).padStart(7)} ms   heap ${(row.heap_bytes_with / 1e6).toFixed(2).padStart(6)} / ${(row.heap_bytes_without / 1e6).toFixed(2).padStart(6)} MB`);
  }
  await setEnabled(true);

  const loadRatio = sum(rows.map((r) => r.load_ms_with)) / sum(rows.map((r) => r.load_ms_without));
  const heapRatio = sum(rows.map((r) => r.heap_bytes_with)) / sum(rows.map((r) => r.heap_bytes_without));
  const loadDiff = median(rows.map((r) => r.load_ms_with - r.load_ms_without));
  const heapDiff = median(rows.map((r) => r.heap_bytes_with - r.heap_bytes_without));
  console.log('');
  console.log(`Extension: ${EXTENSION}`);
  console.log(`Pages: ${rows.length}, ${RUNS} loads each with the extension and ${RUNS} without, taking turns`);
  console.log(`Load time, with / without: ${loadRatio.toFixed(3)} (median per page ${loadDiff >= 0 ? '+' : ''}${loadDiff.toFixed(1)} ms)   goal <= 1.02: ${loadRatio <= 1.02 ? 'met' : 'NOT met'}`);
  console.log(`JS heap, with / without:   ${heapRatio.toFixed(3)} (median per page ${heapDiff >= 0 ? '+' : ''}${(heapDiff / 1e6).toFixed(2)} MB)   goal <= 1.02: ${heapRatio <= 1.02 ? 'met' : 'NOT met'}`);
  if (args.json) {
    writeFileSync(args.json, `${JSON.stringify({
      pages: rows.length,
      load_ratio: Number(loadRatio.toFixed(4)),
      heap_ratio: Number(heapRatio.toFixed(4)),
      load_ms_median_difference: Number(loadDiff.toFixed(2)),
      heap_bytes_median_difference: Math.round(heapDiff),
      runs: RUNS,
      extension: EXTENSION,
      per_page: rows,
    }, null, 2)}\n`);
    console.log(`Figures written to ${args.json}`);
  }
} finally {
  await browser.close();
  await fixtures.close?.();
  rmSync(profile, { recursive: true, force: true });
}
