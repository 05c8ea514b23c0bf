// Records the golden snapshots the Rust serializer is tested against: each fixture page is
// indexed by the real content scripts (in the page, see scripts/lib/indexer-in-page.mjs) and the
// frame snapshot is written to tests/fixtures/snapshots/<name>.json. Rerun after changing the
// indexer, then review the diff of the .json and the .txt the Rust tests print.
//
//   node tests/e2e/record-goldens.mjs
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { chromiumPath, ROOT } from '../../scripts/lib/browser.mjs';
import { loadIndexer, timedSnapshot } from '../../scripts/lib/indexer-in-page.mjs';
import { startFixtureServer } from './lib/fixture-server.mjs';

const PAGES = ['login.html', 'cursor-pointer.html', 'modal-covering.html', 'select-and-details.html', 'scroll-container.html', 'shadow-dom.html'];
const out = path.join(ROOT, 'tests', 'fixtures', 'snapshots');
mkdirSync(out, { recursive: true });

const server = await startFixtureServer();
const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
for (const name of PAGES) {
  await page.goto(`${server.url}/${name}`);
  await loadIndexer(page);
  const { json } = await timedSnapshot(page);
  const snapshot = JSON.parse(json);
  // Stable across runs: the fixture server's port and the random document id.
  snapshot.url = snapshot.url.replace(server.url, 'http://127.0.0.1:8000');
  snapshot.doc = 'recorded';
  writeFileSync(path.join(out, name.replace('.html', '.json')), `${JSON.stringify(snapshot, null, 1)}\n`);
  console.log(`recorded ${name}`);
}
await browser.close();
await server.close();
