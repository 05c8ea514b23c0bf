// The MCP benchmark: what a coding agent reads, and waits for, when it drives a browser through
// Tabwright's MCP server (`tabwright-mcp`, reaching the extension in Chromium over native
// messaging) against Playwright MCP 0.0.83 (npm `@playwright/mcp`), the anchor, in one run.
// Both servers are started over stdio and driven by the official MCP TypeScript SDK's client
// (`Client` + `StdioClientTransport`), each with its own headless Debian Chromium (the same
// binary and flags, 1280×900, every host but this machine's unresolvable), on pages served by
// one fixture server (tests/e2e/lib/fixture-server.mjs): the 72 saved real pages of
// tests/fixtures/real-pages/ and the e2e fixture pages (tests/e2e/fixtures/*.html and actions/),
// and for the tasks the pages of tests/e2e/fixtures/mcp-bench/ (its README says what each is).
// Each server runs with its defaults.
//
// Tokens are o200k tokens (gpt-tokenizer's o200k_base encoding) of the text a client reads:
// the text parts of each tool result, as a client hands them to its model (a structured copy
// beside them is not counted).
//
// 1. A look. Per page: Tabwright's `observe` after `act {navigate}`, against Playwright MCP's
//    `browser_snapshot` after `browser_navigate` (the navigations themselves are not counted):
//    bytes and tokens, totals and medians per page; `tokens_ratio` is ours over theirs, pooled.
//    Then what each look lets a client act on: the actionable recall. The page's actionable
//    elements are taken from the page itself, in a third Chromium driven by Playwright (no MCP
//    server involved), in every frame and open shadow root:
//      a[href], area[href], button, input (not type=hidden), select, textarea, summary,
//      [contenteditable], [onclick], and elements with role button, link, checkbox, radio,
//      switch, tab, menuitem(checkbox|radio), option, combobox, textbox, searchbox, slider,
//      spinbutton or treeitem;
//    kept when rendered (checkVisibility with opacity and visibility, a box of at least 1×1 px
//    inside the page's scrollable area; for a frame, the frame's own box too), not disabled,
//    not under aria-hidden=true or inert, and holding no other kept element (the innermost is
//    what a person clicks). Each is known by its name: aria-label, aria-labelledby's text, its
//    labels' text, its visible text, else its placeholder, title, alt, value, or an inner
//    image's alt. The name's key is its letters and digits, lower-cased, words joined by one
//    space, cut at a word to 40 characters. Elements without a key (an icon with no name) cannot
//    be found by name in either text; they are counted apart and left out of the recall.
//    Each server's text is cut into entries, one per element a client can act on: a line with a
//    handle (ours `[12]<…`, theirs `[ref=e12]`) and the lines after it up to the next handle
//    (link addresses left out: ours `href=`, theirs `/url:`). An element is reached when its
//    key starts a word of an entry, and the key ends a word there too unless it was cut; per
//    key, min(elements with it, entries holding it) are reached. Theirs: the one snapshot.
//    Ours: what `observe` lists on the first screen and after each `act {scroll}` down to the
//    page's end ("[End of page]", at most 40 screens), each index counted once. Those scrolled
//    looks' tokens are reported too (`scroll_through`): what reading the whole page costs us.
// 2. Tasks that need what lies below the first screen, run by one scripted client against
//    both servers. It reads only what a server returns and finds elements by their words in
//    that text (never an index or ref known in advance): ours, `observe` then `act {scroll}`
//    and `observe` again until the element shows; theirs, `browser_snapshot` (its actions'
//    results link the new snapshot as a file, which a client would have to read or ask for).
//    After the last act it reads the result, and one more look when that does not show the
//    effect yet. The fixture server records what each page sent, and that is what counts as
//    done (the page's effect), beside what the client read:
//      fact        the year a wiki-like article's lighthouse was automated, in the 5th of its 10 sections
//      form        a comment form at the bottom of a blog post: type comment, name and email, post
//      tenth       the tenth result of a search results page, followed
//      footer      the "Accessibility statement" link in a landing page's footer, followed
//      iframe      "Reserve the Harbour room" inside a cross-site booking frame below the fold
//      fact-search the same fact through each server's page search (ours `act {search_page}`,
//                  theirs `browser_find`), reported beside the others, not in the goal
//    Per task: tool calls and the tokens of all their results; `task_tokens_ratio` is ours over
//    theirs per task, reported each and as max and median.
// 3. The round trip. On a page of 1,000 controls (500 buttons, 500 fields, and a toggle at the
//    top: mcp-bench/thousand-controls.html), from the client's call to the last reply: ours
//    `act {click}` on the toggle then `observe`, theirs `browser_click` then `browser_snapshot`
//    (the toggle's state is checked in each reply). Three rounds to warm up, then --rounds
//    (30); median, min and max ms.
//
// Goals: a look ≤ 0.05× the tokens (pooled) with recall ≥ theirs; each task ≤ 0.2×; the round
// trip < 50 ms median.
//
// Tabwright's side needs the extension built (scripts/build), `target/release/tabwright-mcp`
// and scripts/install-mcp, which puts the server under TABWRIGHT_HOME and writes the native
// host's manifest into the test profile; TABWRIGHT_HOME and the bridge's socket
// (TABWRIGHT_BRIDGE_SOCKET) are paths of this run, for the installer, Chromium and the server.
// The person is played from an extension page left open in that Chromium: the client allowed
// in advance (stored under `mcp`, and answered to the worker as the options page answers), and
// each act the person's guard holds for their yes (a new site, "Post comment", "Reserve…")
// allowed at once; what was asked is printed. Playwright MCP asks nobody.
// Nothing is attached to that Chromium while it is measured.
//
//   node scripts/lib/bench-mcp.mjs [--json FILE] [--pages TEXT] [--rounds N] [--only playwright]
//
// --pages TEXT keeps the look's pages whose name holds TEXT; --only playwright runs the anchor
// alone (its figures without ours). --json FILE writes {"pages", "tokens_ratio",
// "actionable_recall", "task_tokens_ratio", "round_trip_ms_median", ...}.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { chromium } from 'playwright-core';
import { chromiumPath, connectEndpoint, launchServing, ROOT } from './browser.mjs';
import { median } from './stats.mjs';
import { realPages, startFixtureServer } from '../../tests/e2e/lib/fixture-server.mjs';

const { values: args } = parseArgs({
  options: {
    json: { type: 'string' },
    pages: { type: 'string' },
    rounds: { type: 'string', default: '30' },
    only: { type: 'string' },
  },
});
if (args.only && args.only !== 'playwright') throw new Error(`--only takes "playwright", not ${args.only}`);
const ROUNDS = Math.max(1, Number(args.rounds));
const WARM_ROUNDS = 3;
const MAX_LOOKS = 40;
const GOALS = { tokens_ratio: 0.05, task_tokens_ratio: 0.2, round_trip_ms: 50 };
const CLIENT = { name: 'tabwright-bench', version: '1.0.0' };
const TOKENIZER = 'o200k_base (gpt-tokenizer)';

// Both browsers reach this machine only: a page's scripts, styles and images elsewhere fail at
// once instead of waiting on a network that is not there.
const NO_OTHER_HOSTS = '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost';
const CHROMIUM_FLAGS = [
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--disable-gpu', '--disable-quic', NO_OTHER_HOSTS,
];
const VIEWPORT = { width: 1280, height: 900 };

const FIXTURES_DIR = path.join(ROOT, 'tests', 'e2e', 'fixtures');
// Fixture pages left out of the look, and why.
const LEFT_OUT = {
  'busy-page.html': 'its button blocks the page for 17 s',
  'actions/slow-ready.html': 'it adds its link 1.5 s after it loads, so what is there depends on when one looks',
};

const tokens = (text) => encode(text).length;
const bytes = (text) => Buffer.byteLength(text, 'utf8');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// --- Reading tool results ----------------------------------------------------------------------

/** The text a client's model reads of a tool result: its text parts. */
function resultText(result) {
  return (result?.content ?? []).filter((part) => part.type === 'text').map((part) => part.text).join('\n');
}

/** An MCP server over stdio with a client of the SDK; every call's result text is counted in the
 * current meter, when one is set. */
class Server {
  constructor(name, client, transport, stderr) {
    this.name = name;
    this.client = client;
    this.transport = transport;
    this.stderr = stderr;
    this.meter = null;
  }

  async call(tool, input = {}, { timeout = 90_000 } = {}) {
    const result = await this.client.callTool({ name: tool, arguments: input }, undefined, { timeout });
    const text = resultText(result);
    if (process.env.BENCH_TRACE) {
      appendFileSync(process.env.BENCH_TRACE, `\n=== ${this.name} ${tool} ${JSON.stringify(input)}${this.meter ? ' (counted)' : ''}\n${text}\n`);
    }
    if (this.meter) {
      this.meter.calls.push(tool);
      this.meter.bytes += bytes(text);
      this.meter.tokens += tokens(text);
    }
    return { text, result, isError: Boolean(result.isError) };
  }

  /** Runs `fn`, counting the calls it makes; resolves to {value, calls, bytes, tokens}. */
  async metered(fn) {
    const outer = this.meter;
    const meter = { calls: [], bytes: 0, tokens: 0 };
    this.meter = meter;
    try {
      const value = await fn();
      return { value, ...meter };
    } finally {
      this.meter = outer;
    }
  }

  async close() {
    await this.client.close().catch(() => {});
  }
}

async function connect(name, transport) {
  let said = '';
  transport.stderr?.on('data', (chunk) => {
    said = (said + chunk).slice(-4000);
  });
  const client = new Client(CLIENT);
  await client.connect(transport);
  return new Server(name, client, transport, () => said);
}

// --- What each server's text offers ------------------------------------------------------------

/** Words of a text: letters and digits, lower-cased, one space between. */
const words = (text) => text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** The key an element is found by: the words of its name, cut at a word to 40 characters.
 * `cut` tells whether anything was left off. */
function keyOf(name) {
  const all = words(name ?? '');
  if (all.length <= 40) return { key: all, cut: false };
  const head = all.slice(0, 41);
  const at = head.lastIndexOf(' ');
  return { key: at > 0 ? head.slice(0, at) : all.slice(0, 40), cut: true };
}

/** Whether an entry's words hold the key, starting a word (and ending one, unless it was cut). */
function holds(entryWords, { key, cut }) {
  const hay = ` ${entryWords} `;
  return hay.includes(cut ? ` ${key}` : ` ${key} `);
}

/** Our state text's lines: [{handle (the index, or null), role, name, line}]. The state is the
 * `state` field when the result is a JSON object, else the whole text. */
function ourLines(text) {
  const out = [];
  for (const raw of stateOf(text).split('\n')) {
    const m = /^\s*\*?\[(\d+)\]<([a-z0-9-]+)([^>]*)>(.*)$/i.exec(raw);
    if (!m) {
      if (raw.trim()) out.push({ handle: null, role: null, name: raw.trim(), line: raw.trim() });
      continue;
    }
    const [, index, tag, attrs, text] = m;
    const attr = (key) => {
      const found = new RegExp(`(?:^|\\s)${key}=('(?:[^']*)'|\\S+)`).exec(attrs);
      return found ? found[1].replace(/^'|'$/g, '') : null;
    };
    out.push({
      handle: Number(index),
      role: attr('role') ?? implicitRole(tag.toLowerCase(), attr('type')),
      name: [text, attr('label'), attr('aria-label'), attr('placeholder'), attr('title'), attr('value')].filter(Boolean).join(' '),
      line: raw.trim(),
    });
  }
  return out;
}

function implicitRole(tag, type) {
  switch (tag) {
    case 'a': return 'link';
    case 'button': case 'summary': return 'button';
    case 'select': return 'combobox';
    case 'textarea': return 'textbox';
    case 'input':
      if (['button', 'submit', 'reset', 'image'].includes(type)) return 'button';
      if (['checkbox', 'radio'].includes(type)) return type;
      return 'textbox';
    default: return tag;
  }
}

/** The state text inside an `observe` result. */
function stateOf(text) {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      const value = JSON.parse(trimmed);
      if (typeof value?.state === 'string') return value.state;
    } catch { /* not JSON: the text is the state */ }
  }
  return text;
}

/** Playwright MCP's snapshot lines: [{handle (the ref, or null), role, name, depth, pointer,
 * line}]. A line's name is what it says of the element besides markup: the quoted name and the
 * text after the colon; a link's address says nothing a person reads (`/url:`). */
function theirLines(text) {
  const yaml = /```yaml\n([\s\S]*?)```/.exec(text)?.[1] ?? text;
  const out = [];
  for (const raw of yaml.split('\n')) {
    // A line YAML had to quote (its name holds a colon): `- 'link "A: b" [ref=e1]':`.
    const line = raw.trim().replace(/^-\s+'(.*)'(:?)$/, (_, inner, colon) => `- ${inner.replace(/''/g, "'")}${colon}`);
    if (!line) continue;
    const depth = raw.length - raw.trimStart().length;
    const ref = /\[ref=([^\]]+)\]/.exec(line)?.[1] ?? null;
    if (!ref) {
      // `- text: words`, `- /placeholder: …`: words of the element above; `- /url: …`: none.
      const name = /^-\s+\/url:/.test(line) ? '' : line.replace(/^-\s+(?:text:\s*|\/[a-z]+:\s*)?/, '');
      out.push({ handle: null, role: null, name, depth, pointer: false, line });
      continue;
    }
    const m = /^-\s+([a-z]+)(?:\s+"((?:[^"\\]|\\.)*)")?/.exec(line);
    const tail = /\]:\s+(.*)$/.exec(line)?.[1]?.replace(/^"(.*)"$/, '$1') ?? '';
    out.push({
      handle: ref,
      role: m?.[1] ?? null,
      name: [m?.[2]?.replace(/\\(.)/g, '$1') ?? '', tail].filter(Boolean).join(' '),
      depth,
      pointer: line.includes('[cursor=pointer]'),
      line,
    });
  }
  return out;
}

/** Roles a client acts on: in Playwright MCP's snapshot such an element's words are those of its
 * whole subtree (its children have refs of their own, but a person reads the link as one). */
const ACTING_ROLES = new Set(['link', 'button', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem']);

/** Entries of a server's lines, one per line with a handle, as words: its name, and the names of
 * the lines without a handle after it (Playwright MCP: for an element a client acts on, or one
 * the page draws with a pointer cursor, every line of its subtree). */
function entriesOf(lines) {
  const entries = [];
  lines.forEach((l, i) => {
    if (l.handle === null) return;
    const names = [l.name];
    const whole = l.depth !== undefined && (ACTING_ROLES.has(l.role) || l.pointer);
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j];
      if (whole ? next.depth <= l.depth : next.handle !== null) break;
      names.push(next.name);
    }
    entries.push({ handle: l.handle, words: words(names.join(' ')) });
  });
  return entries;
}

/** How many of the page's named actionable elements the entries reach (see the top). */
function reached(elements, entries) {
  const byKey = new Map();
  for (const el of elements) {
    const k = keyOf(el.name);
    if (!k.key) continue;
    const id = `${k.cut ? '…' : ''}${k.key}`;
    if (!byKey.has(id)) byKey.set(id, { k, count: 0 });
    byKey.get(id).count += 1;
  }
  let found = 0;
  let named = 0;
  const missed = [];
  for (const { k, count } of byKey.values()) {
    named += count;
    const holding = entries.filter((e) => holds(e.words, k)).length;
    found += Math.min(count, holding);
    if (holding < count) missed.push(k.key);
  }
  return { named, found, missed };
}

// --- The page's own actionable elements ---------------------------------------------------------

/** In a document: its kept actionable elements' names (see the top). */
function actionableInPage() {
  const SELECTOR = [
    'a[href]', 'area[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary',
    '[contenteditable]:not([contenteditable=false])', '[onclick]',
    ...['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
      'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'treeitem'].map((r) => `[role=${r}]`),
  ].join(',');
  const found = [];
  const roots = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const el of roots[i].querySelectorAll('*')) {
      if (el.shadowRoot) roots.push(el.shadowRoot);
      if (el.matches(SELECTOR)) found.push(el);
    }
  }
  const doc = document.scrollingElement ?? document.documentElement;
  const width = Math.max(doc.scrollWidth, innerWidth);
  const height = Math.max(doc.scrollHeight, innerHeight);
  const flatParent = (n) => n.assignedSlot ?? n.parentNode ?? n.host ?? null;
  const hidden = (el) => {
    for (let n = el; n && n.nodeType === Node.ELEMENT_NODE; n = flatParent(n)) {
      if (n.getAttribute('aria-hidden') === 'true' || n.inert) return true;
    }
    return false;
  };
  const kept = found.filter((el) => {
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
    const box = el.getBoundingClientRect();
    if (box.width < 1 || box.height < 1) return false;
    const left = box.left + scrollX;
    const top = box.top + scrollY;
    if (left + box.width <= 0 || top + box.height <= 0 || left >= width || top >= height) return false;
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') return false;
    return !hidden(el);
  });
  const keptSet = new Set(kept);
  const holdsKept = new Set();
  for (const el of kept) {
    for (let n = flatParent(el); n && n.nodeType === Node.ELEMENT_NODE; n = flatParent(n)) {
      if (keptSet.has(n)) holdsKept.add(n);
    }
  }
  const text = (s) => (s ?? '').replace(/\s+/g, ' ').trim();
  // A label's words without those of the control inside it (a select's options).
  const labelText = (label, control) => {
    const parts = [];
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!control.contains(n) && n.parentElement?.checkVisibility()) parts.push(n.data);
    }
    return text(parts.join(' '));
  };
  const nameOf = (el) => {
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const root = el.getRootNode();
      const named = text(by.split(/\s+/).map((id) => root.getElementById?.(id)?.textContent ?? '').join(' '));
      if (named) return named;
    }
    const aria = text(el.getAttribute('aria-label'));
    if (aria) return aria;
    const labels = text([...(el.labels ?? [])].map((l) => labelText(l, el)).join(' '));
    if (labels) return labels;
    const own = el.localName === 'select' ? '' : text(el.innerText);
    if (own) return own;
    const pictured = text([...el.querySelectorAll('img[alt]')].map((img) => img.getAttribute('alt')).join(' '));
    if (pictured) return pictured;
    for (const a of ['placeholder', 'title', 'alt', 'value']) {
      const v = text(el.getAttribute(a));
      if (v) return v;
    }
    return '';
  };
  return kept.filter((el) => !holdsKept.has(el)).map((el) => ({ tag: el.localName, name: nameOf(el) }));
}

/** The page's actionable elements, in every frame whose own box is rendered. */
async function actionableElements(page) {
  const all = [];
  for (const frame of page.frames()) {
    if (frame !== page.mainFrame()) {
      const owner = await frame.frameElement().catch(() => null);
      const box = await owner?.boundingBox().catch(() => null);
      if (!box || box.width < 1 || box.height < 1) continue;
    }
    // A frame that never gets a document (its address unreachable here) never answers.
    const timeout = new Promise((resolve) => setTimeout(() => resolve([]), 5_000));
    all.push(...await Promise.race([frame.evaluate(actionableInPage).catch(() => []), timeout]));
  }
  return all;
}

// --- The servers ---------------------------------------------------------------------------------

async function startPlaywrightMcp(dir) {
  const out = path.join(dir, 'output');
  mkdirSync(out, { recursive: true });
  const config = path.join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({
    browser: {
      browserName: 'chromium',
      isolated: true,
      launchOptions: { executablePath: chromiumPath(), headless: true, chromiumSandbox: false, args: CHROMIUM_FLAGS },
      contextOptions: { viewport: VIEWPORT },
    },
    outputDir: out,
  }));
  const cli = path.join(ROOT, 'node_modules', '@playwright', 'mcp', 'cli.js');
  if (!existsSync(cli)) throw new Error('@playwright/mcp is not installed: run scripts/setup');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, '--config', config, '--executable-path', chromiumPath(), '--headless', '--isolated', '--no-sandbox',
      '--viewport-size', `${VIEWPORT.width}x${VIEWPORT.height}`, '--output-dir', out],
    cwd: dir,
    stderr: 'pipe',
  });
  return connect('Playwright MCP', transport);
}

/** A free TCP port on this machine. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Chromium with the extension and the native host's manifest, the client allowed, and
 * tabwright-mcp connected to it. Resolves to {server, browser, close}. Throws with what failed. */
async function startTabwright(dir) {
  if (!existsSync(path.join(ROOT, 'target', 'release', 'tabwright-mcp'))) {
    throw new Error('target/release/tabwright-mcp is missing: build it with cargo build --release --bin tabwright-mcp');
  }
  const installer = path.join(ROOT, 'scripts', 'install-mcp');
  if (!existsSync(installer)) throw new Error('scripts/install-mcp is missing: it writes the native host\'s manifest');
  const profile = path.join(dir, 'profile');
  const home = path.join(dir, 'home');
  mkdirSync(profile, { recursive: true });
  mkdirSync(home, { recursive: true });
  // Chromium starts the native host with its own environment, and install-mcp puts the binary
  // under TABWRIGHT_HOME: both are this run's, for the installer, Chromium and the server alike.
  process.env.TABWRIGHT_BRIDGE_SOCKET = path.join(dir, 'bridge.sock');
  process.env.TABWRIGHT_HOME = home;
  const install = spawnSync(installer, ['--profile', profile], { cwd: ROOT, env: process.env, encoding: 'utf8' });
  if (install.status !== 0) throw new Error(`scripts/install-mcp --profile ${profile} failed (${install.status}):\n${install.stdout}${install.stderr}`);
  const bin = path.join(home, 'bin', 'tabwright-mcp');
  if (!existsSync(bin)) throw new Error(`scripts/install-mcp did not put the server at ${bin}`);

  const browser = await launchServing(profile, { args: [NO_OTHER_HOSTS, `--window-size=${VIEWPORT.width},${VIEWPORT.height}`] });
  try {
    await playThePerson(browser.wsEndpoint);
    const transport = new StdioClientTransport({ command: bin, args: [], cwd: dir, env: { ...process.env }, stderr: 'pipe' });
    const server = await connect('Tabwright', transport);
    await waitForBridge(server);
    // A client's acts begin at an observe (the first starts its own task in the person's browser).
    const first = await server.call('observe', {});
    if (first.isError) throw new Error(`the first observe failed: ${first.text.slice(0, 300)}`);
    return { server, browser, close: async () => { await server.close(); await browser.close(); } };
  } catch (error) {
    await browser.close();
    throw error;
  }
}

/** The person, as the benchmark plays them, in an extension page left open in that Chromium
 * (nothing stays attached to it): this client allowed in advance, as a yes in the side panel
 * would; and every act the person's guard holds for their yes (src/guard: a new site, an act
 * that cannot be undone such as "Post comment" or "Reserve", text crossing sites) allowed, a
 * site for good (`always`) and anything else once, as a person who says yes at once would. The
 * page keeps what it was asked (`consentsAsked`). */
async function playThePerson(wsEndpoint) {
  const attached = await connectEndpoint(wsEndpoint);
  try {
    const mcp = { enabled: true, stop_on_disconnect: false, clients: [{ name: CLIENT.name, title: null, allowed: true, answered_ms: 0 }] };
    const page = await attached.context.newPage();
    await page.goto(`chrome-extension://${attached.extensionId}/options/options.html`);
    await page.evaluate(async (value) => {
      await chrome.storage.local.set({ mcp: value });
      // The worker may have read the stored book before this write: the person's answer, as the
      // options page gives it, reaches it either way.
      const answer = await chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'answer_client', name: value.clients[0].name, allow: true } });
      if (answer?.type !== 'clients') throw new Error(`allowing the client: ${JSON.stringify(answer)}`);
      globalThis.tabwrightBenchConsents = [];
      const listen = () => {
        const port = chrome.runtime.connect({ name: 'tabwright-panel' });
        port.onMessage.addListener((message) => {
          const event = message?.event;
          if (event?.type !== 'consent_asked') return;
          globalThis.tabwrightBenchConsents.push({ kind: event.consent.kind, site: event.consent.site });
          const answer = event.consent.kind === 'new_site' ? 'always' : 'allow_once';
          chrome.runtime.sendMessage({ to: 'core', request: { v: 1, type: 'answer_consent', id: event.consent.id, answer } });
        });
        // Chrome stops an idle worker: listen again on its next start.
        port.onDisconnect.addListener(() => setTimeout(listen, 200));
      };
      listen();
    }, mcp);
  } finally {
    await attached.close();
  }
}

/** What the person was asked during the run: {kind: count}. */
async function consentsAsked(wsEndpoint) {
  const attached = await connectEndpoint(wsEndpoint);
  try {
    const page = attached.context.pages().find((p) => p.url().endsWith('/options/options.html'));
    const asked = (await page?.evaluate(() => globalThis.tabwrightBenchConsents)) ?? [];
    const counts = {};
    for (const c of asked) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
    return counts;
  } finally {
    await attached.close();
  }
}

/** Waits until `tabs` answers (the bridge started and the client is allowed), 60 s at most. */
async function waitForBridge(server) {
  let last = '';
  for (const started = Date.now(); Date.now() - started < 60_000;) {
    try {
      const reply = await server.call('tabs', {}, { timeout: 10_000 });
      if (!reply.isError) return;
      last = reply.text;
    } catch (error) {
      last = error.message;
    }
    await sleep(1000);
  }
  throw new Error(`tabwright-mcp's tabs did not answer within 60 s; last: ${last}\nits stderr: ${server.stderr()}`);
}

// --- The client's ways with each server ----------------------------------------------------------

/** How the scripted client works with Tabwright: look, act on an index, scroll for more. */
class OurDriver {
  constructor(server) {
    this.server = server;
    this.lines = [];
    this.text = '';
  }

  async open(url) {
    await this.navigate(url);
    return this.look();
  }

  /** Goes to `url` in the client's tab. Acts begin at an observe (the client's acts are a task
   * of their own in the person's browser, which the first observe starts): when the server says
   * so, the client observes and goes again, and that look is counted like any other. */
  async navigate(url) {
    this.lastBelow = null;
    let reply = await this.act({ navigate: { url, new_tab: false } });
    if (reply.isError && /observe first/i.test(reply.text)) {
      await this.look();
      reply = await this.act({ navigate: { url, new_tab: false } });
    }
    if (reply.isError) throw new Error(`navigate failed: ${reply.text.slice(0, 300)}`);
    return reply;
  }

  async look() {
    const reply = await this.server.call('observe', {});
    if (reply.isError) throw new Error(`observe failed: ${reply.text}`);
    this.text = reply.text;
    this.lines = ourLines(reply.text);
    return reply.text;
  }

  act(action) {
    return this.server.call('act', { action });
  }

  /** Whether the look reached the page's end: `[End of page]`, or neither `... N px below ...`
   * nor a look cut short (`[... truncated`), or the same distance below as the look before. */
  atEnd() {
    const state = stateOf(this.text);
    if (/^\[End of page\]/m.test(state)) return true;
    const below = /^\.\.\. (\d+) px below \.\.\./m.exec(state)?.[1] ?? null;
    if (below === null) return !/^\[\.\.\. truncated/m.test(state);
    const same = below === this.lastBelow;
    this.lastBelow = below;
    return same;
  }

  /** Scrolls one screen down and looks; false when the page had ended. */
  async more() {
    if (this.atEnd()) return false;
    const reply = await this.act({ scroll: { down: true, pages: 1 } });
    if (reply.isError) throw new Error(`scroll failed: ${reply.text}`);
    await this.look();
    return true;
  }

  /** Calls `visit` on each line in page order, each element once, scrolling for more, until it
 * returns something; resolves to that, or null at the page's end. */
  async scan(visit) {
    const seen = new Set();
    for (let looks = 1; ; looks++) {
      for (const line of this.lines) {
        if (line.handle !== null) {
          if (seen.has(line.handle)) continue;
          seen.add(line.handle);
        }
        const found = visit(line);
        if (found) return found;
      }
      if (looks >= MAX_LOOKS || !(await this.more())) return null;
    }
  }

  /** The first element `test` accepts, in this look or further down. */
  find(test) {
    return this.scan((line) => (test(line) && line.handle !== null ? line : null));
  }

  click(line) {
    return this.act({ click: { index: line.handle } });
  }

  type(line, text) {
    return this.act({ input: { index: line.handle, text, clear: true } });
  }

  search(text) {
    return this.act({ search_page: { pattern: text, regex: false } });
  }
}

/** How the scripted client works with Playwright MCP: a snapshot holds the whole page. */
class TheirDriver {
  constructor(server) {
    this.server = server;
    this.lines = [];
    this.text = '';
  }

  async open(url) {
    await this.navigate(url);
    return this.look();
  }

  async navigate(url) {
    const reply = await this.server.call('browser_navigate', { url });
    if (reply.isError) throw new Error(`browser_navigate failed: ${reply.text.slice(0, 300)}`);
    return reply;
  }

  async look() {
    const reply = await this.server.call('browser_snapshot', {});
    if (reply.isError) throw new Error(`browser_snapshot failed: ${reply.text}`);
    this.text = reply.text;
    this.lines = theirLines(reply.text);
    return reply.text;
  }

  async scan(visit) {
    for (const line of this.lines) {
      const found = visit(line);
      if (found) return found;
    }
    return null;
  }

  find(test) {
    return this.scan((line) => (test(line) && line.handle !== null ? line : null));
  }

  click(line) {
    return this.server.call('browser_click', { element: line.name, target: line.handle });
  }

  type(line, text) {
    return this.server.call('browser_type', { element: line.name, target: line.handle, text });
  }

  search(text) {
    return this.server.call('browser_find', { text });
  }
}

// --- The tasks -------------------------------------------------------------------------------------

const named = (role, pattern) => (line) => line.role === role && pattern.test(line.name);

/** Acts on the element `test` finds; when the server says the page changed under it, looks
 * again and tries once more. */
async function actOn(driver, test, act, what, { fresh = () => test } = {}) {
  for (let attempt = 0; attempt < 2; attempt++) {
    const line = await driver.find(fresh());
    if (!line) throw new Error(`${what}: not found in what the server showed`);
    const reply = await act(line);
    if (!reply.isError) return reply;
    if (attempt === 1) throw new Error(`${what}: ${reply.text.slice(0, 300)}`);
    await driver.look();
  }
  return null;
}

/** Whether the client can see `shown` in the last reply, or else in one more look. */
async function confirm(driver, reply, shown) {
  if (shown.test(reply.text)) return true;
  return shown.test(await driver.look());
}

/** Whether the fixture server was asked for an address `test` accepts (a URL object). */
const visited = (server, test) => server.effects().visits.some((v) => test(new URL(v.url, 'http://fixtures')));

const TASKS = [
  {
    name: 'fact',
    what: 'the year a wiki-like article\'s lighthouse was automated (the 5th of its 10 sections)',
    page: 'mcp-bench/wiki-article.html',
    async run(driver) {
      const line = await driver.scan((l) => (/automated on/i.test(l.name) ? l : null));
      const answer = /automated on (\d{1,2} \w+ \d{4})/i.exec(line?.name ?? '')?.[1] ?? null;
      return { ok: answer === '14 May 1983', said: answer };
    },
  },
  {
    name: 'form',
    what: 'the comment form at the bottom of a blog post: comment, name, email, post',
    page: 'mcp-bench/form-bottom.html',
    async run(driver, fixtures) {
      await actOn(driver, named('textbox', /\bComment\b/), (l) => driver.type(l, 'Colder proof worked for us too.'), 'the Comment field');
      await actOn(driver, named('textbox', /\bName\b/), (l) => driver.type(l, 'Ada Lovelace'), 'the Name field');
      await actOn(driver, named('textbox', /\bEmail\b/), (l) => driver.type(l, 'ada@example.com'), 'the Email field');
      const reply = await actOn(driver, named('button', /Post comment/), (l) => driver.click(l), 'the Post comment button');
      const seen = await confirm(driver, reply, /comment was posted|Comment posted/i);
      const posted = visited(fixtures, (u) => u.pathname === '/mcp-bench/comment-posted.html'
        && u.searchParams.get('name') === 'Ada Lovelace' && u.searchParams.get('email') === 'ada@example.com'
        && u.searchParams.get('comment') === 'Colder proof worked for us too.');
      return { ok: seen && posted, said: posted ? 'posted' : 'not posted' };
    },
  },
  {
    name: 'tenth',
    what: 'the tenth result of a search results page, followed',
    page: 'mcp-bench/results.html',
    async run(driver, fixtures) {
      // The results are the links after "About N results" and before "Related searches".
      let count = 0;
      const tenth = () => {
        let started = false;
        count = 0;
        return (line) => {
          if (/About [\d,]+ results/.test(line.name)) started = true;
          if (/^Related searches/.test(line.name)) started = false;
          if (!started || line.role !== 'link') return false;
          count += 1;
          return count === 10;
        };
      };
      const reply = await actOn(driver, null, (l) => driver.click(l), 'the tenth result', { fresh: tenth });
      const seen = await confirm(driver, reply, /result\.html\?n=10\b/);
      return { ok: seen && visited(fixtures, (u) => u.pathname === '/mcp-bench/result.html' && u.searchParams.get('n') === '10'), said: `result ${count}` };
    },
  },
  {
    name: 'footer',
    what: 'the "Accessibility statement" link in a landing page\'s footer, followed',
    page: 'mcp-bench/footer-links.html',
    async run(driver, fixtures) {
      const reply = await actOn(driver, named('link', /Accessibility statement/), (l) => driver.click(l), 'the footer link');
      const seen = await confirm(driver, reply, /accessibility\.html/);
      return { ok: seen && visited(fixtures, (u) => u.pathname === '/mcp-bench/accessibility.html'), said: seen ? 'followed' : 'not seen' };
    },
  },
  {
    name: 'iframe',
    what: '"Reserve the Harbour room" inside a cross-site booking frame below the fold',
    page: 'mcp-bench/iframe-booking.html',
    async run(driver, fixtures) {
      const reply = await actOn(driver, named('button', /Reserve the Harbour room/), (l) => driver.click(l), 'the Reserve button');
      const seen = await confirm(driver, reply, /Reservation held|booking-done/);
      const held = visited(fixtures, (u) => u.pathname === '/mcp-bench/booking-done.html' && u.searchParams.get('room') === 'harbour');
      return { ok: seen && held, said: held ? 'reserved' : 'not reserved' };
    },
  },
  {
    name: 'fact-search',
    what: 'the same fact through the server\'s page search',
    page: 'mcp-bench/wiki-article.html',
    extra: true,
    async run(driver) {
      const reply = await driver.search('automated on');
      // Each server marks the match its own way (ours in [brackets]): the words around it count.
      const answer = /automated on (\d{1,2} \w+ \d{4})/i.exec(reply.text.replace(/[[\]]/g, ' ').replace(/\s+/g, ' '))?.[1] ?? null;
      return { ok: answer === '14 May 1983', said: answer };
    },
    opensWithoutLook: true,
  },
];

/** Runs each task on one server; per task {name, ok, said, calls, tokens, bytes, error}. */
async function runTasks(server, driver, fixtures) {
  const out = [];
  for (const task of TASKS) {
    fixtures.reset();
    const url = `${fixtures.url}/${task.page}`;
    let outcome;
    try {
      const run = await server.metered(async () => {
        if (task.opensWithoutLook) {
          await driver.navigate(url);
        } else {
          await driver.open(url);
        }
        return task.run(driver, fixtures);
      });
      outcome = { ...run.value, calls: run.calls.length, call_names: run.calls, tokens: run.tokens, bytes: run.bytes };
    } catch (error) {
      outcome = { ok: false, error: error.message.split('\n')[0] };
    }
    out.push({ name: task.name, ...outcome });
  }
  return out;
}

// --- The look -----------------------------------------------------------------------------------------

function lookPages(server) {
  const html = (dir) => readdirSync(path.join(FIXTURES_DIR, dir)).filter((f) => f.endsWith('.html')).map((f) => (dir ? `${dir}/${f}` : f));
  const fixtures = [...html(''), ...html('actions')].filter((f) => !LEFT_OUT[f]).sort();
  let pages = [
    ...realPages().map((name) => ({ name: name.replace(/\.html$/, ''), url: `${server.url}/real/${name}`, kind: 'real' })),
    ...fixtures.map((name) => ({ name, url: `${server.url}/${name}`, kind: 'fixture' })),
  ];
  if (args.pages) pages = pages.filter((p) => p.name.includes(args.pages));
  return pages;
}

async function theirLook(server, url) {
  const nav = await server.call('browser_navigate', { url });
  if (nav.isError) throw new Error(`browser_navigate: ${nav.text.slice(0, 300)}`);
  const snap = await server.call('browser_snapshot', {});
  if (snap.isError) throw new Error(`browser_snapshot: ${snap.text.slice(0, 300)}`);
  return { text: snap.text, entries: entriesOf(theirLines(snap.text)) };
}

async function ourLook(server, url) {
  const driver = new OurDriver(server);
  await server.metered(() => driver.navigate(url));
  const first = await driver.look();
  const texts = [first];
  const byHandle = new Map();
  const take = () => {
    for (const e of entriesOf(driver.lines)) if (!byHandle.has(e.handle)) byHandle.set(e.handle, e);
  };
  take();
  const through = await server.metered(async () => {
    let looks = 1;
    while (looks < MAX_LOOKS && await driver.more()) {
      looks += 1;
      texts.push(driver.text);
      take();
    }
    return looks;
  });
  return {
    text: first,
    entries: [...byHandle.values()],
    looks: through.value,
    scroll_tokens: tokens(first) + through.tokens,
    scroll_calls: 1 + through.calls.length,
    looks_text: texts,
  };
}

// --- Round trip -------------------------------------------------------------------------------------

async function roundTrip(driver, fixtures, name) {
  await driver.open(`${fixtures.url}/mcp-bench/thousand-controls.html`);
  const toggle = await driver.find(named('button', /Toggle details/));
  if (!toggle) throw new Error(`${name}: the Toggle details button is not in the look`);
  const ms = [];
  const actMs = [];
  let shown = false;
  for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
    const started = performance.now();
    const click = await driver.click(toggle);
    const clicked = performance.now();
    const look = await driver.look();
    const took = performance.now() - started;
    if (click.isError) throw new Error(`${name}: the click failed: ${click.text.slice(0, 300)}`);
    shown = !shown;
    if (!look.includes(shown ? 'Details shown' : 'Details hidden')) {
      throw new Error(`${name}: round ${round + 1}: the look does not show the toggle's new state`);
    }
    if (round >= WARM_ROUNDS) {
      ms.push(took);
      actMs.push(clicked - started);
    }
  }
  return {
    median: Number(median(ms).toFixed(1)),
    min: Number(Math.min(...ms).toFixed(1)),
    max: Number(Math.max(...ms).toFixed(1)),
    rounds: ms.length,
    act_ms_median: Number(median(actMs).toFixed(1)),
    look_ms_median: Number(median(ms.map((m, i) => m - actMs[i])).toFixed(1)),
  };
}

// --- Run ----------------------------------------------------------------------------------------------

const work = mkdtempSync(path.join(os.tmpdir(), 'tabwright-mcp-bench-'));
const fixtures = await startFixtureServer();
const truthBrowser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', ...CHROMIUM_FLAGS] });
const truthPage = await truthBrowser.newPage({ viewport: VIEWPORT });
const theirs = await startPlaywrightMcp(path.join(work, 'playwright'));
mkdirSync(path.join(work, 'tabwright'), { recursive: true });
let ours = null;
let oursFailed = null;
if (!args.only) {
  try {
    ours = await startTabwright(path.join(work, 'tabwright'));
  } catch (error) {
    oursFailed = error.message;
  }
}

const toolsTokens = async (server) => tokens(JSON.stringify((await server.client.listTools()).tools));
const tools = { theirs: await toolsTokens(theirs), ours: ours ? await toolsTokens(ours.server) : null };

const rows = [];
const pages = lookPages(fixtures);
try {
  for (const page of pages) {
    const row = { name: page.name, kind: page.kind };
    const started = Date.now();
    try {
      await truthPage.goto(page.url, { waitUntil: 'load', timeout: 30_000 });
      const elements = await actionableElements(truthPage);
      row.truth_ms = Date.now() - started;
      row.actionable = elements.length;
      row.unnamed = elements.filter((e) => !keyOf(e.name).key).length;
      const t = await theirLook(theirs, page.url);
      const tr = reached(elements, t.entries);
      Object.assign(row, { named: tr.named, theirs_bytes: bytes(t.text), theirs_tokens: tokens(t.text), theirs_found: tr.found });
      let o = null;
      if (ours) {
        o = await ourLook(ours.server, page.url);
        const or = reached(elements, o.entries);
        Object.assign(row, {
          ours_bytes: bytes(o.text), ours_tokens: tokens(o.text), ours_found: or.found, ours_looks: o.looks,
          ours_scroll_tokens: o.scroll_tokens, ours_missed: or.missed.slice(0, 5),
        });
      }
      row.theirs_missed = tr.missed.slice(0, 5);
      if (process.env.BENCH_TEXTS) {
        mkdirSync(process.env.BENCH_TEXTS, { recursive: true });
        const file = (side) => path.join(process.env.BENCH_TEXTS, `${page.name.replace(/\//g, '_')}.${side}.txt`);
        writeFileSync(file('theirs'), t.text);
        writeFileSync(file('elements'), elements.map((e) => `${e.tag}\t${keyOf(e.name).key}`).join('\n'));
        if (o) writeFileSync(file('ours'), o.looks_text.join('\n\n'));
      }
    } catch (error) {
      row.error = error.message.split('\n')[0];
    }
    rows.push(row);
    process.stderr.write(`${page.name}: ${row.error ?? `${row.theirs_tokens} / ${row.ours_tokens ?? '-'} tokens`} (${Date.now() - started} ms)\n`);
  }
} catch (error) {
  console.error(error);
}

const taskRows = { theirs: await runTasks(theirs, new TheirDriver(theirs), fixtures), ours: ours ? await runTasks(ours.server, new OurDriver(ours.server), fixtures) : null };
const trip = { theirs: null, ours: null };
try {
  trip.theirs = await roundTrip(new TheirDriver(theirs), fixtures, 'Playwright MCP');
} catch (error) {
  trip.theirs = { error: error.message };
}
if (ours) {
  try {
    trip.ours = await roundTrip(new OurDriver(ours.server), fixtures, 'Tabwright');
  } catch (error) {
    trip.ours = { error: error.message };
  }
}

const asked = ours ? await consentsAsked(ours.browser.wsEndpoint).catch((error) => ({ unread: error.message })) : null;
await theirs.close();
await ours?.close();
await truthBrowser.close();
await fixtures.close();
rmSync(work, { recursive: true, force: true });

// --- Figures -------------------------------------------------------------------------------------------

const good = rows.filter((r) => !r.error && (!ours || r.ours_tokens !== undefined));
const sum = (xs, key) => xs.reduce((s, r) => s + (r[key] ?? 0), 0);
const ratio = (a, b) => (b ? Number((a / b).toFixed(4)) : null);
const look = {
  pages: good.length,
  theirs_tokens: sum(good, 'theirs_tokens'),
  theirs_bytes: sum(good, 'theirs_bytes'),
  theirs_tokens_median: good.length ? median(good.map((r) => r.theirs_tokens)) : null,
  named: sum(good, 'named'),
  theirs_found: sum(good, 'theirs_found'),
  actionable: sum(good, 'actionable'),
  unnamed: sum(good, 'unnamed'),
};
look.theirs_recall = ratio(look.theirs_found, look.named);
if (ours) {
  Object.assign(look, {
    ours_tokens: sum(good, 'ours_tokens'),
    ours_bytes: sum(good, 'ours_bytes'),
    ours_tokens_median: good.length ? median(good.map((r) => r.ours_tokens)) : null,
    ours_found: sum(good, 'ours_found'),
    ours_scroll_tokens: sum(good, 'ours_scroll_tokens'),
  });
  look.ours_recall = ratio(look.ours_found, look.named);
  look.tokens_ratio = ratio(look.ours_tokens, look.theirs_tokens);
  look.scroll_through_tokens_ratio = ratio(look.ours_scroll_tokens, look.theirs_tokens);
}

const perTask = TASKS.map((task, i) => {
  const t = taskRows.theirs[i];
  const o = taskRows.ours?.[i] ?? null;
  return {
    name: task.name, what: task.what, extra: Boolean(task.extra), theirs: t, ours: o,
    ratio: o && o.tokens !== undefined && t.tokens ? ratio(o.tokens, t.tokens) : null,
  };
});
const goalRatios = perTask.filter((t) => !t.extra && t.ratio !== null).map((t) => t.ratio);

const pad = (v, n) => String(v ?? '-').padStart(n);
const pct = (x) => (x === null || x === undefined ? '-' : `${(x * 100).toFixed(1)}%`);
console.log(`MCP benchmark — Tabwright (tabwright-mcp) against Playwright MCP 0.0.83, one Chromium each, ${VIEWPORT.width}×${VIEWPORT.height}; tokens: ${TOKENIZER}`);
if (oursFailed) console.log(`Tabwright's side did not start: ${oursFailed}`);
console.log('');
console.log('1. A look, per page (tokens of the look; recall: the page\'s named actionable elements each text reaches, ours over its scrolled looks)');
console.log(`${'page'.padEnd(34)}${pad('elements', 9)}${pad('named', 7)}${pad('theirs', 8)}${pad('ours', 7)}${pad('×', 7)}${pad('th.rec', 8)}${pad('our.rec', 8)}${pad('looks', 6)}`);
for (const r of rows) {
  if (r.error) {
    console.log(`${r.name.slice(0, 33).padEnd(34)}  error: ${r.error}`);
    continue;
  }
  console.log(`${r.name.slice(0, 33).padEnd(34)}${pad(r.actionable, 9)}${pad(r.named, 7)}${pad(r.theirs_tokens, 8)}${pad(r.ours_tokens, 7)}`
    + `${pad(r.ours_tokens !== undefined ? (r.ours_tokens / r.theirs_tokens).toFixed(3) : '-', 7)}`
    + `${pad(pct(r.named ? r.theirs_found / r.named : null), 8)}${pad(r.ours_found !== undefined ? pct(r.named ? r.ours_found / r.named : null) : '-', 8)}${pad(r.ours_looks, 6)}`);
}
console.log('');
console.log(`Pages: ${look.pages} (${Object.entries(LEFT_OUT).map(([p, why]) => `${p} left out: ${why}`).join('; ')})`);
console.log(`Playwright MCP browser_snapshot: ${look.theirs_tokens} tokens, ${look.theirs_bytes} bytes in all; median ${look.theirs_tokens_median} tokens a page; recall ${pct(look.theirs_recall)} (${look.theirs_found} of ${look.named} named actionable elements; ${look.unnamed} unnamed left out)`);
if (ours) {
  console.log(`Tabwright observe:             ${look.ours_tokens} tokens, ${look.ours_bytes} bytes in all; median ${look.ours_tokens_median} tokens a page; recall ${pct(look.ours_recall)} (${look.ours_found} of ${look.named}) over its scrolled looks`);
  console.log(`Reading the whole page by scrolling: ${look.ours_scroll_tokens} tokens (${look.scroll_through_tokens_ratio}× theirs)`);
}
if (asked) console.log(`The person's guard asked, and the benchmark said yes: ${JSON.stringify(asked)}`);
console.log(`Tool lists (schemas a client loads once): Playwright MCP ${tools.theirs} tokens, Tabwright ${tools.ours ?? '-'}`);
console.log('');
console.log('2. Tasks (tokens of every tool result the client read; calls)');
console.log(`${'task'.padEnd(13)}${pad('theirs', 9)}${pad('calls', 6)}${pad('ours', 8)}${pad('calls', 6)}${pad('×', 8)}  done (theirs / ours)`);
for (const t of perTask) {
  const state = (x) => (x ? (x.error ? `failed: ${x.error}` : x.ok ? 'yes' : `no (${x.said})`) : '-');
  console.log(`${(t.name + (t.extra ? '*' : '')).padEnd(13)}${pad(t.theirs.tokens, 9)}${pad(t.theirs.calls, 6)}${pad(t.ours?.tokens, 8)}${pad(t.ours?.calls, 6)}${pad(t.ratio, 8)}  ${state(t.theirs)} / ${state(t.ours)}`);
}
console.log('* not in the goal: the same fact as "fact", through each server\'s page search.');
console.log('');
console.log(`3. Round trip on 1,000 controls, ${ROUNDS} rounds after ${WARM_ROUNDS}: `
  + `Playwright MCP browser_click + browser_snapshot ${trip.theirs?.error ? `failed: ${trip.theirs.error}` : `median ${trip.theirs.median} ms (min ${trip.theirs.min}, max ${trip.theirs.max}; the click ${trip.theirs.act_ms_median}, the look ${trip.theirs.look_ms_median})`}; `
  + `Tabwright act + observe ${!ours ? '-' : trip.ours?.error ? `failed: ${trip.ours.error}` : `median ${trip.ours.median} ms (min ${trip.ours.min}, max ${trip.ours.max}; the act ${trip.ours.act_ms_median}, the observe ${trip.ours.look_ms_median})`}`);
console.log('');
const met = (ok) => (ok === null ? 'not measured' : ok ? 'met' : 'NOT met');
const allTasksDone = taskRows.ours ? perTask.filter((t) => !t.extra).every((t) => t.ours?.ok) : null;
console.log('Goals');
console.log(`  a look ≤ ${GOALS.tokens_ratio}× the tokens, pooled: ${look.tokens_ratio ?? '-'}   ${met(look.tokens_ratio == null ? null : look.tokens_ratio <= GOALS.tokens_ratio)}`);
console.log(`  every element a person would use reachable (recall ≥ theirs): ours ${pct(look.ours_recall)}, theirs ${pct(look.theirs_recall)}   ${met(look.ours_recall == null ? null : look.ours_recall >= look.theirs_recall)}`);
console.log(`  each task ≤ ${GOALS.task_tokens_ratio}×: max ${goalRatios.length ? Math.max(...goalRatios) : '-'}, median ${goalRatios.length ? median(goalRatios) : '-'}; all done: ${allTasksDone ?? '-'}   ${met(goalRatios.length ? Math.max(...goalRatios) <= GOALS.task_tokens_ratio && allTasksDone : null)}`);
console.log(`  round trip < ${GOALS.round_trip_ms} ms median: ${trip.ours?.median ?? '-'}   ${met(trip.ours?.median == null ? null : trip.ours.median < GOALS.round_trip_ms)}`);

if (args.json) {
  writeFileSync(args.json, `${JSON.stringify({
    pages: look.pages,
    tokens_ratio: look.tokens_ratio ?? null,
    actionable_recall: look.ours_recall ?? null,
    task_tokens_ratio: Object.fromEntries(perTask.filter((t) => !t.extra).map((t) => [t.name, t.ratio])),
    round_trip_ms_median: trip.ours?.median ?? null,
    tokenizer: TOKENIZER,
    anchor: 'Playwright MCP 0.0.83',
    anchor_actionable_recall: look.theirs_recall,
    task_tokens_ratio_max: goalRatios.length ? Math.max(...goalRatios) : null,
    task_tokens_ratio_median: goalRatios.length ? median(goalRatios) : null,
    anchor_round_trip_ms: trip.theirs,
    round_trip_ms: trip.ours,
    look,
    tools_list_tokens: tools,
    tasks: perTask,
    per_page: rows,
    tabwright_error: oursFailed,
    consents_asked: asked,
  }, null, 2)}\n`);
  console.log(`Figures written to ${args.json}`);
}
