// Runs Tabwright's indexer inside an ordinary page (its main world), outside the extension:
// for recording golden snapshots and for the DOM benchmark, which times it against another
// indexer in the same page the same way. The content scripts are loaded as they are; the few
// extension APIs they touch get stand-ins: no closed shadow roots (chrome.dom is an extension
// API), and frames are not asked for their ids.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EXTENSION_DIR } from './browser.mjs';

const FILES = ['visibility.js', 'interactive.js', 'text.js', 'frames.js', 'indexer.js'];

const STANDIN = `globalThis.chrome ??= {};
globalThis.chrome.runtime ??= { sendMessage: () => Promise.resolve(null) };
globalThis.chrome.dom ??= { openOrClosedShadowRoot: (el) => el.shadowRoot };`;

/** The script text that defines window.tabwright in a page. */
export function indexerSource() {
  return [STANDIN, ...FILES.map((f) => readFileSync(path.join(EXTENSION_DIR, 'content', f), 'utf8'))].join('\n;\n');
}

/** Loads the indexer into `page` (a Playwright page). */
export async function loadIndexer(page) {
  await page.addScriptTag({ content: indexerSource() });
}

/** One snapshot of `page`, as JSON text, and how long it took in the page (ms): from the call
 * to a serialized result ready to send. */
export async function timedSnapshot(page, viewportExpansion = 500) {
  return page.evaluate(async (expansion) => {
    const started = performance.now();
    const json = JSON.stringify(await window.tabwright.snapshot({ viewportExpansion: expansion }));
    return { ms: performance.now() - started, json };
  }, viewportExpansion);
}
