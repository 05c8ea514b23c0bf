// The eyes on saved real pages (tests/fixtures/real-pages/, from postlight/parser's test
// fixtures: pages nobody here wrote), through the real extension: for each page, the things a
// person would use there must be in the state text the model receives, as elements it can act
// on. The pages are served without their scripts, and requests to their sites never leave the
// machine (see tests/e2e/lib/fixture-server.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startObserver, pageOf } from './lib/observe.mjs';

let o;

before(async () => {
  o = await startObserver();
  await o.h.context.route((url) => /^https?:$/.test(url.protocol) && !['127.0.0.1', 'localhost'].includes(url.hostname),
    (route) => route.abort());
});

after(async () => {
  await o?.close();
});

/** The element lines of a state text, without their indices. */
function elementLines(state) {
  return pageOf(state).split('\n').filter((l) => /^\t*\*?\[\d+\]</.test(l)).map((l) => l.replace(/^\t*\*?\[\d+\]/, ''));
}

/** Asserts that an element line matches each pattern (its tag, attributes and text). */
function assertElements(name, state, patterns) {
  const lines = elementLines(state);
  for (const pattern of patterns) {
    assert.ok(lines.some((l) => pattern.test(l)), `${name}: no element matches ${pattern} in:\n${pageOf(state).slice(0, 6000)}`);
  }
}

// Per page, what a person would use at the top of it: sign-in, search, navigation, the page's
// own controls. Each pattern is written from the page as it shows, not from our output.
const PAGES = {
  'github.com': [
    /^<input\b.*placeholder='Search or jump to…'/, // the search box
    /^<button\b.*>Sign out$/,
    /^<a\b.*>Fork 50$/, // fork the repository
    /^<button\b.*>Starred 964$/, // starred already: the button unstars
    /^<summary\b.*>Watch 24$/, // the repository's notifications menu
    /^<a\b.*>Pull requests$/, // the site's own navigation
  ],
  'www.theguardian.com': [
    /^<a\b.*>Sign in$/,
    /^<a\b.*>Search jobs$/,
    /^<a\b.*>UK edition$/, // the edition picker
    /^<a\b.*>Opinion$/, // the sections
    /^<a\b.*>Sport$/,
  ],
  'pastebin.com': [
    /^<a\b.*>Login$/,
    /^<a\b.*>Sign up$/,
    /^<a\b.*>raw$/, // the paste's own tools
    /^<a\b.*>download$/,
  ],
  'clinicaltrials.gov': [
    /^<input type=search\b/, // search the glossary
    /^<a\b.*>Advanced Search$/,
    /^<a\b.*>See Studies by Topic$/,
    /^<button\b.*>Hide glossary$/,
  ],
  // A menu of anchors without href, which a script opens on the live site.
  'www.spektrum.de': [/^<input\b.*placeholder=Suche/, /^<a\b.*>Magazine$/, /^<a\b.*>Archiv$/, /^<a\b.*>Service$/],
  // A shop's product grid: a product link whose picture and name wrap over two lines.
  'www.sanwa.co.jp': [/^<a\b.*>ダイレクトショップ$/, /^<a\b.*>ビーコン内蔵チェア/, /^<a\b.*>オフィス向けデスク/],
  // A menu whose links hold blocks (an icon, a title, a description), each row's middle under an
  // SVG sprite the unstyled page draws large: each entry is its own link.
  'www.elecom.co.jp': [/^<a\b.*>.*製品情報.* エレコム製品/, /^<a\b.*>.*製品カテゴリ一覧.* 製品のカテゴリー/, /^<a\b.*>.*ピックアップ.* 数ある製品/],
};

for (const [site, patterns] of Object.entries(PAGES)) {
  test(`a saved ${site} page: what a person would use is offered`, async () => {
    const page = await o.h.context.newPage();
    await page.goto(`${o.h.fixtures.url}/real/${site}.html`);
    const state = await o.look(page);
    assertElements(site, state, patterns);
    await page.close();
  });
}
